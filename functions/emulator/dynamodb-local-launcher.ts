import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/*
 * The loopback launcher (dynamodb-local-loopback.java) compiled once per version of its source,
 * into a directory under the system's temp dir. Run in Java's source-file mode it would be compiled
 * on every start, most of a start's CPU, and the tests start the engine about two dozen times
 * (docs/contributing.md, "How long the tests take").
 */

const SOURCE = fileURLToPath(new URL('./dynamodb-local-loopback.java', import.meta.url));
/** The launcher's class: javac wants its source in a file of the same name. */
export const LAUNCHER_CLASS = 'DynamoDbLocalLoopback';

const run = promisify(execFile);
let compiled: Promise<string> | undefined;

/** The directory holding the compiled launcher, compiled against `classPath` on first use. */
export function compiledLauncher(classPath: string): Promise<string> {
  compiled ??= compile(classPath).catch((err: unknown) => {
    compiled = undefined;
    throw err;
  });
  return compiled;
}

async function compile(classPath: string): Promise<string> {
  const source = await readFile(SOURCE);
  const version = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), `agenthost-dynamodb-launcher-${version}`);
  if (await exists(join(dir, `${LAUNCHER_CLASS}.class`))) return dir;
  // Compiled aside and renamed into place, so a process starting the engine at the same moment
  // finds either nothing or the whole class.
  const work = await mkdtemp(join(tmpdir(), 'agenthost-dynamodb-launcher-build-'));
  try {
    const file = join(work, `${LAUNCHER_CLASS}.java`);
    await copyFile(SOURCE, file);
    const out = join(work, 'classes');
    await mkdir(out);
    try {
      await run('javac', ['-cp', classPath, '-d', out, file]);
    } catch (err) {
      throw new Error(`DynamoDB Local needs a Java 17 or newer JDK (java and javac) on PATH: ${String(err)}`);
    }
    await rename(out, dir).catch(async (err: unknown) => {
      // Another process put it there first.
      if (!(await exists(join(dir, `${LAUNCHER_CLASS}.class`)))) throw err;
    });
    return dir;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
