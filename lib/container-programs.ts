import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cachedBuildSync } from './esbuild-cache.ts';
import type { ModuleAccess } from './module-access.ts';

const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The programs that run inside ECS tasks (functions/containers/), each bundled by esbuild into one
 * CommonJS file for Node 22 or newer, with everything it imports (the archive readers included).
 * The CDK writes them into the assets of the functions that hand them to tasks; the tests build
 * them the same way.
 */
export const CONTAINER_PROGRAMS = {
  'sandbox-runner': 'functions/containers/sandbox-runner.ts',
  'service-gateway': 'functions/containers/service-gateway.ts',
  'service-app-launcher': 'functions/containers/service-app-launcher.ts',
} as const;

export type ContainerProgram = keyof typeof CONTAINER_PROGRAMS;

/**
 * The programs a function hands to tasks, from what it may touch: one that runs sandboxes uploads
 * the runner with each run (functions/containers/sandbox-protocol.ts); one that manages services
 * puts the gateway in each task definition and uploads the launcher on each start
 * (service-protocol.ts).
 */
export function containerProgramsOf(access: ModuleAccess): ContainerProgram[] {
  return [
    ...(access.sandbox ? (['sandbox-runner'] as const) : []),
    ...(access.services ? (['service-gateway', 'service-app-launcher'] as const) : []),
  ];
}

/** Where a program sits in a function's asset (and so, in Lambda, under /var/task). */
export const containerProgramFile = (name: ContainerProgram) => `containers/${name}.cjs`;

export function buildContainerProgram(name: ContainerProgram): string {
  const result = cachedBuildSync({
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
  const [out] = result.files;
  if (!out) throw new Error(`esbuild produced nothing for ${name}`);
  return Buffer.from(out.contents).toString('utf8');
}
