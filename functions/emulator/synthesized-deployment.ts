import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CfnTemplate, StackTemplate } from './cloudformation-template.ts';
import { assemblyNestedTemplates, foldNestedStacks } from './nested-stacks.ts';

/**
 * The cloud assembly `cdk synth` writes (templates and one asset folder per Lambda), produced by
 * the project's own CDK app (bin/cdk-app.ts) in a child process, exactly as `npm run synth` and
 * `cdk deploy` produce it. Synthesis bundles every function (about a minute on two cores the first
 * time, about 10 s when lib/esbuild-cache.ts has the bundles), so an
 * assembly is reused while no source file, the lock file or the CDK context has changed since it
 * was written.
 */

const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FINGERPRINT_FILE = '.agenthost-fingerprint';

export interface SynthesizedDeployment {
  directory: string;
  stacks: StackTemplate[];
  /** The folder of a Lambda's code (its `Code.S3Key`, `<hash>.zip`). */
  assetDir(s3Key: string): string;
  /** True when this start reused an assembly instead of synthesizing. */
  reused: boolean;
}

/**
 * Everything synthesis reads: the sources (path, size, modification time) of the functions, the
 * CDK app and the dashboard (web/, built into its asset at synthesis with the SDK's client, sdk/;
 * not their build output), the lock file and the context.
 */
export function fingerprint(context: Record<string, unknown>, root = PROJECT_ROOT): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'dist' && entry.name !== 'node_modules') walk(path);
      } else if (
        /\.(ts|tsx|mts|cts|js|mjs|cjs|json|css|html|svg)$/.test(entry.name) &&
        !entry.name.endsWith('.test.ts')
      ) {
        const s = statSync(path);
        hash.update(`${path}\0${s.size}\0${s.mtimeMs}\n`);
      }
    }
  };
  // sdk/: the dashboard is built with the SDK's client (web/src/api-client.ts).
  for (const dir of ['functions', 'lib', 'bin', 'web', 'sdk']) walk(join(root, dir));
  for (const file of ['package-lock.json', 'cdk.json']) {
    hash.update(readFileSync(join(root, file)));
  }
  hash.update(JSON.stringify(context));
  return hash.digest('hex');
}

function readAssembly(directory: string, reused: boolean): SynthesizedDeployment {
  const manifest = JSON.parse(readFileSync(join(directory, 'manifest.json'), 'utf8')) as {
    artifacts: Record<string, { type: string; properties?: { templateFile?: string } }>;
  };
  // Each stack with its nested stacks folded in, as CloudFormation deploys them (nested-stacks.ts).
  const nested = assemblyNestedTemplates(directory);
  const stacks: StackTemplate[] = Object.entries(manifest.artifacts)
    .filter(([, a]) => a.type === 'aws:cloudformation:stack' && a.properties?.templateFile)
    .map(([stackName, a]) => ({
      stackName,
      template: foldNestedStacks(
        JSON.parse(
          readFileSync(join(directory, a.properties?.templateFile as string), 'utf8'),
        ) as CfnTemplate,
        nested,
      ),
    }));
  return {
    directory,
    stacks,
    reused,
    assetDir(s3Key) {
      const dir = join(directory, `asset.${s3Key.replace(/\.zip$/, '')}`);
      if (!existsSync(dir)) throw new Error(`The assembly has no asset ${s3Key}`);
      return dir;
    },
  };
}

/** Longer than any swap takes: a lock this old was left by a start that died holding it. */
const STALE_LOCK_MS = 30_000;

/**
 * Moves a finished assembly from `staging` to `directory`. Starts that share the directory (the
 * tests' parallel files do) may finish synthesizing at the same moment; the swap (look at the
 * marker, remove a stale assembly, rename ours in) runs under a lock directory so that two of them
 * never interleave: one would fail its rename (ENOTEMPTY) or remove the other's fresh assembly
 * while it is read. The loser finds the same fingerprint in place and drops its copy.
 */
export async function putInPlace(
  staging: string,
  directory: string,
  marker: string,
  print: string,
): Promise<void> {
  const lock = `${directory}.lock`;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) await rm(lock, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    if (existsSync(marker) && readFileSync(marker, 'utf8') === print) {
      await rm(staging, { recursive: true, force: true });
    } else {
      await rm(directory, { recursive: true, force: true });
      await rename(staging, directory);
    }
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/**
 * The assembly in `directory`, synthesized first unless the one there was made from the same
 * sources and context. `progress` gets a line before the long step.
 */
export async function synthesize(
  directory: string,
  context: Record<string, unknown>,
  progress: (line: string) => void,
): Promise<SynthesizedDeployment> {
  const print = fingerprint(context);
  const marker = join(directory, FINGERPRINT_FILE);
  if (existsSync(marker) && readFileSync(marker, 'utf8') === print) return readAssembly(directory, true);

  progress('Synthesizing the CDK app (bundles every Lambda, or reuses their builds; up to a minute)…');
  // Written beside the target and renamed into place, so starts that share an assembly directory
  // (the tests do) never read a half-written one.
  const staging = `${directory}.staging-${process.pid}-${Date.now()}`;
  await mkdir(staging, { recursive: true });
  const nodeDir = dirname(process.execPath);
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [join(PROJECT_ROOT, 'bin', 'cdk-app.ts')], {
        cwd: PROJECT_ROOT,
        // What the CDK CLI hands its app: where to write, and the context.
        env: {
          PATH: `${nodeDir}:/usr/local/bin:/usr/bin:/bin`,
          CDK_OUTDIR: staging,
          CDK_CONTEXT_JSON: JSON.stringify(context),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr?.on('data', (c: Buffer) => {
        stderr = (stderr + c.toString('utf8')).slice(-8000);
      });
      child.on('error', reject);
      child.on('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`cdk synth failed (exit ${code}):\n${stderr}`)),
      );
    });
    writeFileSync(join(staging, FINGERPRINT_FILE), print);
    await putInPlace(staging, directory, marker, print);
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
  return readAssembly(directory, false);
}
