import { processConfig } from './config.ts';
import { createDeps, type Deps } from './deps.ts';

/** Lambda entry points share one dependency set per container, built from the environment on first use. */
export const lambdaDeps = lazyDeps(() => createDeps(processConfig()));

/** A lazily built, process-wide dependency set for Lambda entry points. */
export function lazyDeps(build: () => Promise<Deps>): () => Promise<Deps> {
  let deps: Promise<Deps> | undefined;
  return () => {
    deps ??= build().catch((err) => {
      deps = undefined;
      throw err;
    });
    return deps;
  };
}
