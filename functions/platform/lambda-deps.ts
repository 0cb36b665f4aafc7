import { processConfig } from './config.ts';
import { createDeps } from './deps.ts';
import { lazyDeps } from './http-handler.ts';

/** Lambda entry points share one dependency set per container, built from the environment on first use. */
export const lambdaDeps = lazyDeps(() => createDeps(processConfig()));
