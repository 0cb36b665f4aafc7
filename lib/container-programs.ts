import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The programs that run inside ECS tasks (functions/containers/), each bundled by esbuild into one
 * CommonJS file for Node 22 or newer, with everything it imports (the archive readers included).
 * The CDK writes them into the assets of the functions that hand them to tasks; the tests build
 * them the same way.
 */
export const CONTAINER_PROGRAMS = {
  'sandbox-runner': 'functions/containers/sandbox-runner.ts',
} as const;

export type ContainerProgram = keyof typeof CONTAINER_PROGRAMS;

/** Where a program sits in a function's asset (and so, in Lambda, under /var/task). */
export const containerProgramFile = (name: ContainerProgram) => `containers/${name}.cjs`;

export function buildContainerProgram(name: ContainerProgram): string {
  const result = buildSync({
    entryPoints: [join(PROJECT_ROOT, CONTAINER_PROGRAMS[name])],
    absWorkingDir: PROJECT_ROOT,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    minify: true,
    write: false,
    logLevel: 'warning',
  });
  const [out] = result.outputFiles;
  if (!out) throw new Error(`esbuild produced nothing for ${name}`);
  return out.text;
}
