import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { type AgenthostAppOptions, addAgenthostStacks } from '../../lib/agenthost-app.ts';
import type { PlatformFunction } from '../../lib/constructs/platform-function.ts';
import { foldedTemplate } from '../helpers/folded-template.ts';
import { templatesApp } from '../helpers/synthesized-stacks.ts';

/**
 * Reserved concurrency of the functions that run agents: context an infra team
 * sets once it knows its account's Lambda quota (`-c callsConcurrency=N -c mcpConcurrency=N
 * -c scheduleFireConcurrency=N`), none by default, since a new account's quota may leave nothing to
 * reserve (Lambda keeps 100 unreserved) and the stack would then fail to deploy.
 */

const outdir = mkdtempSync(join(tmpdir(), 'agenthost-cdk-reserved-'));
after(() => rmSync(outdir, { recursive: true, force: true }));

function reserved(given?: AgenthostAppOptions['reservedConcurrency']) {
  const app = templatesApp(outdir);
  const { stateless } = addAgenthostStacks(app, given ? { reservedConcurrency: given } : {});
  const resources = foldedTemplate(stateless).toJSON().Resources as Record<
    string,
    { Type: string; Properties: { ReservedConcurrentExecutions?: number } }
  >;
  const of = (fn: PlatformFunction) =>
    resources[stateless.getLogicalId(fn.function.node.defaultChild as CfnFunction)]?.Properties
      .ReservedConcurrentExecutions;
  return {
    calls: of(stateless.functions.calls),
    mcp: of(stateless.functions.mcp),
    scheduleFire: of(stateless.schedules.fireFunction),
    others: Object.values(resources).filter(
      (r) => r.Type === 'AWS::Lambda::Function' && r.Properties.ReservedConcurrentExecutions !== undefined,
    ).length,
  };
}

describe('stateless stack: reserved concurrency of the functions that run agents', () => {
  test('none by default, so a new account’s small quota deploys', () => {
    assert.deepEqual(reserved(), { calls: undefined, mcp: undefined, scheduleFire: undefined, others: 0 });
  });

  test('each as the context gives it, and no other function’s', () => {
    assert.deepEqual(reserved({ calls: 200, mcp: 50, scheduleFire: 20 }), {
      calls: 200,
      mcp: 50,
      scheduleFire: 20,
      others: 3,
    });
    assert.deepEqual(reserved({ calls: 100 }), {
      calls: 100,
      mcp: undefined,
      scheduleFire: undefined,
      others: 1,
    });
  });

  test('anything but a whole number from 1 to 10,000 fails the synthesis, naming the value', () => {
    for (const bad of [{ calls: 0 }, { mcp: 2.5 }, { scheduleFire: 20_000 }, { calls: Number.NaN }]) {
      assert.throws(
        () => reserved(bad),
        /(calls|mcp|scheduleFire)Concurrency must be a whole number/,
        JSON.stringify(bad),
      );
    }
  });
});
