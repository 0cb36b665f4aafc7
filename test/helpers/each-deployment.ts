import { describe, type SuiteContext, type TestOptions } from 'node:test';
import { DEPLOYMENTS, type DeploymentKind } from './deployment.ts';

type SuiteOptions = Omit<TestOptions, 'concurrency'>;

/**
 * Declares an end-to-end suite once for each deployment (test/helpers/deployment.ts), the two side
 * by side: `${title} (local deployment)` and `${title} (emulated deployment)`, each running its own
 * tests one after another. An end-to-end file mostly waits (a deployment starting, the cloud's
 * timing, a model's slow answer), so its two deployments waiting at once hold its slot of the run
 * half as long for the same work. Each suite starts its own deployment and fakes in its hooks, so
 * the two share nothing but the file.
 */
export function eachDeployment(
  title: string,
  options: SuiteOptions,
  suite: (kind: DeploymentKind, context: SuiteContext) => void,
): void {
  describe(title, { concurrency: DEPLOYMENTS.length }, () => {
    // concurrency 1: a suite inherits its parent's, and a deployment's tests build on each other.
    for (const kind of DEPLOYMENTS)
      describe(`${title} (${kind} deployment)`, { ...options, concurrency: 1 }, (context) =>
        suite(kind, context),
      );
  });
}
