import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { ENV } from '../../functions/shared/env-names.ts';
import { addAgenthostStacks } from '../../lib/agenthost-app.ts';

// CDK validates every synthesized template with its CloudFormation engine (about 4 s of CPU a
// synthesis); test/cdk/cdk.test.ts synthesizes the same stacks with it on, so this file does not.
process.env.CDK_VALIDATION = 'false';

/**
 * The sandbox's warm runner pool is sized from CDK context (`-c sandboxPoolMin=… -c
 * sandboxPoolMax=…`, default 2 and 10; docs/sandbox-aws.md): the functions that run sandboxes get
 * both, and nothing else does; bad sizes fail the synthesis. Bundling is skipped: only the
 * template matters here.
 */

const outdir = mkdtempSync(join(tmpdir(), 'agenthost-cdk-pool-'));
after(() => rmSync(outdir, { recursive: true, force: true }));

describe('stateless stack: the warm runner pool’s size', () => {
  test('reaches the four functions that run sandboxes, and no other', () => {
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const { stateless } = addAgenthostStacks(app, { sandboxPool: { min: 3, max: 7 } });
    const resources = Template.fromStack(stateless).toJSON().Resources as Record<
      string,
      { Properties: { Environment: { Variables: Record<string, unknown> } } }
    >;
    const variables = (fn: { function: { node: { defaultChild?: unknown } } }) =>
      resources[stateless.getLogicalId(fn.function.node.defaultChild as CfnFunction)]?.Properties.Environment
        .Variables ?? {};
    const runners = [
      ...(['calls', 'mcp', 'schedule-runs'] as const).map((m) => [m, stateless.functions[m]] as const),
      ['schedule-fire', stateless.schedules.fireFunction] as const,
    ];
    for (const [name, fn] of runners) {
      assert.equal(variables(fn)[ENV.sandboxPoolMin], '3', name);
      assert.equal(variables(fn)[ENV.sandboxPoolMax], '7', name);
    }
    assert.equal(variables(stateless.functions.tasks)[ENV.sandboxPoolMax], undefined);
  });

  test('refuses sizes that are not whole numbers in range, at synthesis', () => {
    for (const sandboxPool of [{ max: -1 }, { max: 1.5 }, { max: 5000 }, { min: -2 }, { max: Number.NaN }]) {
      assert.throws(
        () => addAgenthostStacks(new App({ outdir }), { sandboxPool }),
        /sandboxPool(Min|Max) must be a whole number/,
        JSON.stringify(sandboxPool),
      );
    }
  });
});
