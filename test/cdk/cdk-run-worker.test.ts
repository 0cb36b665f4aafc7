/**
 * The run worker (docs/runs.md, "Long runs") on the synthesized stateless stack: a Lambda durable
 * function past Lambda's 15 minutes, invoked by its alias by the functions that start runs and by
 * nothing else, checkpointing its own executions only.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { MAX_RUN_TIMEOUT_SECONDS } from '../../functions/core/agents/manifest-limits.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { RUN_WORKER_ALIAS } from '../../lib/constructs/run-worker.ts';
import { type CfnResourceJson, synthesizeStacks } from '../helpers/synthesized-stacks.ts';

const { outdir, stateless, statelessJson, resourcesOfType } = synthesizeStacks();
after(() => rmSync(outdir, { recursive: true, force: true }));

type Statement = { Action: string | string[]; Resource: unknown };
const idOf = (c: IConstruct) => Stack.of(c).getLogicalId(c.node.defaultChild as never);
const actions = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);
const statementsOfRole = (roleId: string): Statement[] =>
  resourcesOfType('AWS::IAM::Policy')
    .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);

describe('stateless stack: the run worker (docs/runs.md, "Long runs")', () => {
  const runs = stateless.runs;
  const worker = statelessJson.Resources[idOf(runs.worker.function)] as CfnResourceJson;
  const aliasId = idOf(runs.alias);

  test('a durable function: 15-minute invocations, an execution the longest run and an invocation more', () => {
    assert.equal(worker.Properties.Timeout, 900);
    assert.deepEqual(worker.Properties.DurableConfig, {
      ExecutionTimeout: MAX_RUN_TIMEOUT_SECONDS + 900,
      RetentionPeriodInDays: 1,
    });
    const alias = statelessJson.Resources[aliasId] as CfnResourceJson;
    assert.equal(alias.Type, 'AWS::Lambda::Alias');
    assert.equal(alias.Properties.Name, RUN_WORKER_ALIAS);
  });

  test('only the functions that start runs may invoke it, by its alias, which they are given', () => {
    const aliasRef = JSON.stringify({ Ref: aliasId });
    const invokers = resourcesOfType('AWS::IAM::Policy')
      .filter(([, p]) =>
        (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement.some(
          (s) =>
            actions(s).includes('lambda:InvokeFunction') && JSON.stringify(s.Resource).includes(aliasRef),
        ),
      )
      .flatMap(([, p]) => (p.Properties.Roles as { Ref: string }[]).map((r) => r.Ref))
      .sort();
    assert.deepEqual(
      invokers,
      [idOf(stateless.functions.calls.role), idOf(stateless.functions.mcp.role)].sort(),
    );
    const givenTo = resourcesOfType('AWS::Lambda::Function')
      .filter(([, fn]) => {
        const vars = (fn.Properties.Environment as { Variables?: Record<string, unknown> })?.Variables ?? {};
        return vars[ENV.runWorkerFunction] !== undefined;
      })
      .map(([id]) => id)
      .sort();
    assert.deepEqual(
      givenTo,
      [idOf(stateless.functions.calls.function), idOf(stateless.functions.mcp.function)].sort(),
    );
  });

  test('it checkpoints and reads its own executions, and nothing else of Lambda', () => {
    const lambda = statementsOfRole(idOf(runs.worker.role)).filter((s) =>
      actions(s).some((a) => a.startsWith('lambda:')),
    );
    const workerArn = JSON.stringify({ 'Fn::GetAtt': [idOf(runs.worker.function), 'Arn'] });
    const own = lambda.filter((s) => JSON.stringify(s.Resource).includes(workerArn));
    assert.deepEqual(own.flatMap(actions).sort(), [
      'lambda:CheckpointDurableExecution',
      'lambda:GetDurableExecutionState',
    ]);
    assert.match(JSON.stringify(own[0]?.Resource), /:\*"/, 'its executions, of any version');
    // Besides, it queues a run's completion webhook to the alert-delivery function.
    const others = lambda.filter((s) => !own.includes(s)).flatMap(actions);
    assert.deepEqual(others, ['lambda:InvokeFunction']);
  });
});
