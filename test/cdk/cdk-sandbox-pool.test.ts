import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { App } from 'aws-cdk-lib';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { ENV } from '../../functions/shared/env-names.ts';
import { addAgenthostStacks } from '../../lib/agenthost-app.ts';
import type { WarmPoolRefill } from '../../lib/constructs/warm-pool-refill.ts';
import { foldedTemplate } from '../helpers/folded-template.ts';
import { templatesApp } from '../helpers/synthesized-stacks.ts';

/**
 * The sandbox's warm runner pool is sized from CDK context (`-c sandboxPoolMin=… -c
 * sandboxPoolMax=…`, default 2 and 10; docs/sandbox-aws.md): the functions that run sandboxes get
 * both, and nothing else does; bad sizes fail the synthesis. Bundling is skipped: only the
 * template matters here.
 */

const outdir = mkdtempSync(join(tmpdir(), 'agenthost-cdk-pool-'));
after(() => rmSync(outdir, { recursive: true, force: true }));

describe('stateless stack: the warm runner pool’s size', () => {
  test('reaches the four functions that run sandboxes and the pool’s refill, and no other', () => {
    const app = templatesApp(outdir);
    const { stateless } = addAgenthostStacks(app, { sandboxPool: { min: 3, max: 7 } });
    const resources = foldedTemplate(stateless).toJSON().Resources as Record<
      string,
      { Properties: { Environment: { Variables: Record<string, unknown> } } }
    >;
    const variables = (fn: { function: { node: { defaultChild?: unknown } } }) =>
      resources[stateless.getLogicalId(fn.function.node.defaultChild as CfnFunction)]?.Properties.Environment
        .Variables ?? {};
    const runners = [
      ...(['calls', 'mcp', 'schedule-runs'] as const).map((m) => [m, stateless.functions[m]] as const),
      ['schedule-fire', stateless.schedules.fireFunction] as const,
      ['sandbox-pool', (stateless.warmPool as WarmPoolRefill).function] as const,
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

  test('is refilled every minute by a function that may start sandbox tasks and touch the pool’s objects, nothing more', () => {
    const app = templatesApp(outdir);
    const { stateless } = addAgenthostStacks(app);
    const template = foldedTemplate(stateless);
    const refill = stateless.warmPool as WarmPoolRefill;
    const id = (c: { node: { defaultChild?: unknown } }) =>
      stateless.getLogicalId(c.node.defaultChild as never);
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [
        {
          Arn: { 'Fn::GetAtt': [id(refill.function.function), 'Arn'] },
          Id: 'Target0',
          RetryPolicy: { MaximumRetryAttempts: 0 },
        },
      ],
    });
    type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) =>
        (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === id(refill.function.role)),
      )
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
    const actions = statements.flatMap((s) => [s.Action].flat());
    for (const a of ['ecs:RunTask', 'ecs:TagResource', 'iam:PassRole', 's3:GetObject', 's3:PutObject'])
      assert.ok(actions.includes(a), a);
    for (const a of actions) {
      assert.ok(
        /^(ecs:(RunTask|TagResource)|iam:PassRole|s3:(GetObject|PutObject)|kms:(GenerateDataKey|Decrypt)$|dynamodb:|logs:|xray:)/.test(
          a,
        ),
        `the refill may not ${a}`,
      );
    }
    const run = statements.find((s) => [s.Action].flat().includes('ecs:RunTask')) as Statement;
    assert.deepEqual(run.Resource, { Ref: id(stateless.sandbox.taskDefinition) });
    const objects = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('s3:')));
    assert.equal(objects.length, 1);
    assert.match(JSON.stringify(objects[0]?.Resource), /"\/sandbox-inputs\/pool\/\*"\]\]\}$/);
  });

  test('has no refill when it is off (sandboxPoolMax=0)', () => {
    const app = templatesApp(outdir);
    const { stateless } = addAgenthostStacks(app, { sandboxPool: { max: 0 } });
    assert.equal(stateless.warmPool, undefined);
    const rules = foldedTemplate(stateless).findResources('AWS::Events::Rule', {
      Properties: { ScheduleExpression: 'rate(1 minute)' },
    });
    assert.deepEqual(rules, {});
  });

  test('by default (sandboxSpot on): the cluster has FARGATE_SPOT among its capacity providers, and the runners’ starters know it', () => {
    const app = templatesApp(outdir);
    const { stateless } = addAgenthostStacks(app, { sandboxIdleMinSeconds: 30 });
    const template = foldedTemplate(stateless);
    const cluster = stateless.getLogicalId(stateless.sandbox.cluster.node.defaultChild as never);
    template.hasResourceProperties('AWS::ECS::ClusterCapacityProviderAssociations', {
      Cluster: { Ref: cluster },
      CapacityProviders: ['FARGATE', 'FARGATE_SPOT'],
    });
    const resources = template.toJSON().Resources as Record<
      string,
      { Properties: { Environment?: { Variables: Record<string, unknown> } } }
    >;
    const variables = (fn: { function: { node: { defaultChild?: unknown } } }) =>
      resources[stateless.getLogicalId(fn.function.node.defaultChild as never)]?.Properties.Environment
        ?.Variables ?? {};
    for (const fn of [stateless.functions.calls, (stateless.warmPool as WarmPoolRefill).function]) {
      assert.equal(variables(fn)[ENV.sandboxSpot], 'on');
      assert.equal(variables(fn)[ENV.sandboxIdleMinMs], '30000');
    }
  });

  test('sandboxSpot=off: no capacity providers, no Spot; anything but on or off fails the synthesis', () => {
    const app = templatesApp(outdir);
    const { stateless } = addAgenthostStacks(app, { sandboxSpot: 'off' });
    const template = foldedTemplate(stateless);
    assert.deepEqual(template.findResources('AWS::ECS::ClusterCapacityProviderAssociations'), {});
    const calls = template.toJSON().Resources[
      stateless.getLogicalId(stateless.functions.calls.function.node.defaultChild as never)
    ] as { Properties: { Environment: { Variables: Record<string, unknown> } } };
    assert.equal(calls.Properties.Environment.Variables[ENV.sandboxSpot], undefined);
    assert.equal(
      calls.Properties.Environment.Variables[ENV.sandboxIdleMinMs],
      undefined,
      'the adapter’s 60 s',
    );
    // The task definition is the default runner's size; larger agents' runs override it.
    template.hasResourceProperties('AWS::ECS::TaskDefinition', { Cpu: '256', Memory: '1024' });
    assert.throws(
      () => addAgenthostStacks(new App({ outdir }), { sandboxSpot: 'yes' }),
      /sandboxSpot must be on or off/,
    );
    assert.throws(
      () => addAgenthostStacks(new App({ outdir }), { sandboxIdleMinSeconds: 0 }),
      /sandboxIdleMinSeconds must be a whole number from 1 to 600/,
    );
  });

  test('a named stage: no floor and so no refill, no alarm per function, unless told; production keeps both', () => {
    const synth = (options: Parameters<typeof addAgenthostStacks>[1]) => {
      const app = templatesApp(outdir);
      const { stateless } = addAgenthostStacks(app, options);
      const template = foldedTemplate(stateless);
      return {
        stateless,
        refills: Object.keys(
          template.findResources('AWS::Events::Rule', {
            Properties: { ScheduleExpression: 'rate(1 minute)' },
          }),
        ).length,
        alarms: Object.keys(template.findResources('AWS::CloudWatch::Alarm')).length,
      };
    };
    const production = synth({});
    const dev = synth({ stage: 'dev' });
    const devTold = synth({ stage: 'dev', sandboxPool: { min: 1 }, functionAlarms: 'on' });
    assert.equal(production.stateless.warmPool !== undefined, true);
    assert.equal(production.refills, 1);
    assert.equal(dev.stateless.warmPool, undefined, 'no floor to keep: no refill function');
    assert.equal(dev.refills, 0);
    assert.equal(devTold.stateless.warmPool !== undefined, true);
    // The API's 5xx and the lost cron fires' alarms stay in a stage; one more per function otherwise.
    assert.equal(dev.alarms, 2);
    assert.ok(production.alarms > 10, `${production.alarms}`);
    assert.equal(devTold.alarms, production.alarms, 'functionAlarms=on brings them back in a stage');
    assert.throws(() => synth({ functionAlarms: 'maybe' }), /functionAlarms must be on or off/);
  });
});
