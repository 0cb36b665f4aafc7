/**
 * Least privilege on the synthesized stateless stack: what each module's role may do with the table,
 * the bucket and Secrets Manager (lib/module-access.ts), the billing secret and jobs, and the model
 * providers' keys.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { TABLE_SCHEMA } from '../../functions/adapters/aws/table-schema.ts';
import { MODULES, type ResourceModule, routeList } from '../../functions/platform/routes.ts';
import { PROJECT_ROOT } from '../../lib/constructs/platform-function.ts';
import type { ServiceHosting } from '../../lib/constructs/service-hosting.ts';
import type { WarmPoolRefill } from '../../lib/constructs/warm-pool-refill.ts';
import {
  BUNDLE_READ_ACTIONS,
  BUNDLE_WRITE_ACTIONS,
  MODULE_ACCESS,
  SECRETS_READ_ACTIONS,
  SECRETS_WRITE_ACTIONS,
  TABLE_ACTIONS,
  TABLE_READ_ACTIONS,
} from '../../lib/module-access.ts';
import { type CfnResourceJson, synthesizeStacks } from '../helpers/synthesized-stacks.ts';

const {
  outdir,
  stateful,
  stateless,
  statelessTemplate,
  statelessJson,
  resourcesOfType,
  platformFunctions,
  functionLogicalId,
} = synthesizeStacks();
after(() => rmSync(outdir, { recursive: true, force: true }));

describe('stateless stack: least privilege', () => {
  type Statement = { Action: string | string[]; Resource: unknown; Effect: string; Condition?: unknown };
  const statementsOf = (module: ResourceModule): Statement[] => {
    const roleId = stateless.getLogicalId(stateless.functions[module].role.node.defaultChild as never);
    return resourcesOfType('AWS::IAM::Policy')
      .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  };
  const actionsOf = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);
  const resourcesOf = (s: Statement) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]);

  const tableArn = { 'Fn::ImportValue': stateful.exportNames.tableArn };
  const tableResources = [
    tableArn,
    ...TABLE_SCHEMA.indexes.map((i) => ({ 'Fn::Join': ['', [tableArn, `/index/${i.name}`]] })),
  ];

  test('modules that use the store may use exactly the table and its named indexes', () => {
    for (const module of MODULES) {
      const access = MODULE_ACCESS[module].table;
      const all = statementsOf(module).filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
      // Every API function may count keyless requests and its callers' request rate: an update of
      // the ADDRESS# and REQUESTS# partitions only.
      const counters = all.filter((s) => JSON.stringify(s.Condition ?? {}).includes('ADDRESS#*'));
      const dynamo = all.filter((s) => !counters.includes(s));
      if (access === 'read-write') assert.deepEqual(counters, [], `${module} needs no second grant`);
      else {
        assert.equal(counters.length, 1, module);
        assert.deepEqual(actionsOf(counters[0] as Statement), ['dynamodb:UpdateItem'], module);
        assert.deepEqual((counters[0] as Statement).Condition, {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['ADDRESS#*', 'REQUESTS#*'] },
        });
      }
      if (access === 'none') {
        assert.deepEqual(dynamo, [], module);
        continue;
      }
      assert.equal(dynamo.length, 1, module);
      const [statement] = dynamo as [Statement];
      const expected = access === 'read-write' ? TABLE_ACTIONS : TABLE_READ_ACTIONS;
      assert.deepEqual([...actionsOf(statement)].sort(), [...expected].sort(), module);
      assert.deepEqual(resourcesOf(statement), tableResources, module);
    }
    // What the route table needs: every module with an authenticated route reads the API keys.
    for (const [, route] of routeList) {
      if (route.auth === 'api-key') assert.notEqual(MODULE_ACCESS[route.module].table, 'none', route.module);
    }
  });

  test('no role reaches the bucket beyond its prefixes; only the run paths reach the run objects (secret values)', () => {
    const bucket = JSON.stringify({ 'Fn::ImportValue': stateful.exportNames.bundleBucketArn });
    const byRole = new Map<string, Set<string>>();
    for (const [, policy] of resourcesOfType('AWS::IAM::Policy')) {
      for (const st of (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement) {
        if (!actionsOf(st).some((a) => a.startsWith('s3:'))) continue;
        for (const resource of resourcesOf(st)) {
          const text = JSON.stringify(resource);
          if (!text.includes(bucket)) continue;
          const prefix = /"\/((?:[a-z-]+\/)*)\*"/.exec(text)?.[1] || '(whole bucket)';
          for (const role of policy.Properties.Roles as { Ref: string }[]) {
            byRole.set(role.Ref, (byRole.get(role.Ref) ?? new Set()).add(prefix));
          }
        }
      }
    }
    const roleOf = (fn: { role: { node: { defaultChild: unknown } } }) =>
      stateless.getLogicalId(fn.role.node.defaultChild as never);
    const runPaths = new Set([
      roleOf(stateless.functions.calls),
      roleOf(stateless.functions.mcp),
      roleOf(stateless.functions['schedule-runs']),
      roleOf(stateless.schedules.fireFunction),
      Stack.of(stateless.runs.worker).getLogicalId(stateless.runs.worker.role.node.defaultChild as never),
    ]);
    // The functions that manage services put and read the service launcher (docs/services.md).
    const serviceManagers = new Set([
      roleOf(stateless.functions.services),
      roleOf((stateless.services as ServiceHosting).eventsFunction),
    ]);
    for (const role of serviceManagers) assert.ok(byRole.get(role)?.has('service-programs/'), role);
    // The warm pool's refill signs its runners' claim URLs: the pool's prefix, no other run object.
    const poolRefill = roleOf((stateless.warmPool as WarmPoolRefill).function);
    assert.deepEqual([...(byRole.get(poolRefill) ?? [])], ['sandbox-inputs/pool/']);
    // Housekeeping deletes what sessions that never closed left, and may read nothing of it.
    const housekeeping = roleOf(stateless.billing.housekeepingFunction);
    let listings = 0;
    for (const [, policy] of resourcesOfType('AWS::IAM::Policy')) {
      if (!(policy.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === housekeeping)) continue;
      for (const st of (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement) {
        const on = JSON.stringify(st.Resource);
        if (on.includes('/sandbox-'))
          assert.deepEqual(actionsOf(st).sort(), ['s3:DeleteObject', 's3:DeleteObjectVersion']);
        else if (on === bucket) {
          // The bucket itself: its versions under the run prefixes listed, nothing else.
          assert.deepEqual(actionsOf(st), ['s3:ListBucketVersions']);
          listings++;
          assert.deepEqual(st.Condition, {
            StringLike: { 's3:prefix': ['sandbox-inputs/*', 'sandbox-results/*'] },
          });
        }
      }
    }
    assert.equal(listings, 1, 'housekeeping lists the run objects’ versions');
    // The sandbox's execution role reads a task's env file, and finds the bucket for that; nothing
    // else (docs/sandbox-aws.md, "Who can read a run's secrets").
    const executionRole = stateless.getLogicalId(stateless.sandbox.executionRole.node.defaultChild as never);
    const executionS3 = resourcesOfType('AWS::IAM::Policy')
      .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === executionRole))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
      .filter((st) => actionsOf(st).some((a) => a.startsWith('s3:')));
    assert.deepEqual(
      executionS3.map((st) => [actionsOf(st), JSON.stringify(st.Resource).replace(bucket, '<bucket>')]),
      [
        [['s3:GetObject'], '{"Fn::Join":["",[<bucket>,"/sandbox-inputs/*/task.env"]]}'],
        [['s3:GetBucketLocation'], '<bucket>'],
      ],
    );
    byRole.delete(executionRole);
    for (const [role, prefixes] of byRole) {
      const allowed = runPaths.has(role)
        ? ['bundles/', 'sandbox-inputs/', 'sandbox-results/']
        : serviceManagers.has(role)
          ? ['bundles/', 'service-programs/']
          : role === poolRefill
            ? ['sandbox-inputs/pool/']
            : role === housekeeping
              ? ['bundles/', 'sandbox-inputs/', 'sandbox-results/', '(whole bucket)']
              : ['bundles/'];
      assert.deepEqual(
        [...prefixes].filter((p) => !allowed.includes(p)),
        [],
        role,
      );
    }
    for (const role of runPaths) {
      assert.deepEqual(
        [...(byRole.get(role) ?? [])].sort(),
        ['bundles/', 'sandbox-inputs/', 'sandbox-results/'],
        role,
      );
    }
  });

  test('only the modules declared to use bundles reach the bundles, and only their prefix', () => {
    const objects = {
      'Fn::Join': ['', [{ 'Fn::ImportValue': stateful.exportNames.bundleBucketArn }, '/bundles/*']],
    };
    for (const module of MODULES) {
      const access = MODULE_ACCESS[module].bundles;
      // The calls function's grant on the sandbox run objects is asserted in 'sandbox cluster' below.
      const s3 = statementsOf(module).filter(
        (s) =>
          actionsOf(s).some((a) => a.startsWith('s3:')) &&
          !/\/sandbox-(inputs|results)\/\*/.test(JSON.stringify(s.Resource)) &&
          !/\/service-programs\/\*/.test(JSON.stringify(s.Resource)),
      );
      if (MODULE_ACCESS[module].services) {
        // The service launcher: put on every start, read through the URLs this role signs.
        const programs = statementsOf(module).filter((s) =>
          /\/service-programs\/\*/.test(JSON.stringify(s.Resource)),
        );
        assert.deepEqual(programs.map(actionsOf), [['s3:PutObject', 's3:GetObject']], module);
      }
      if (access === 'none') {
        assert.deepEqual(s3, [], module);
        continue;
      }
      assert.equal(s3.length, 1, module);
      const [statement] = s3 as [Statement];
      const expected =
        access === 'read-write' ? [...BUNDLE_READ_ACTIONS, ...BUNDLE_WRITE_ACTIONS] : BUNDLE_READ_ACTIONS;
      assert.deepEqual([...actionsOf(statement)].sort(), [...expected].sort(), module);
      assert.deepEqual(resourcesOf(statement), [objects], module);
    }
  });

  test('openapi and health have no table (but the address counters), bucket or Secrets Manager access', () => {
    for (const module of ['openapi', 'health'] as const) {
      assert.equal(MODULE_ACCESS[module].table, 'none');
      const actions = statementsOf(module).flatMap(actionsOf);
      assert.deepEqual(
        actions.filter((a) => /^(dynamodb|s3|secretsmanager|kms):/.test(a)),
        ['dynamodb:UpdateItem'],
        module,
      );
      // What is left: counting keyless requests, writing its own logs and X-Ray segments.
      assert.deepEqual(
        [...new Set(actions)].sort(),
        [
          'dynamodb:UpdateItem',
          'logs:CreateLogStream',
          'logs:PutLogEvents',
          'xray:PutTelemetryRecords',
          'xray:PutTraceSegments',
        ],
        module,
      );
    }
  });

  test('only modules declared to use the vault reach Secrets Manager, within the prefix: write-only or read-only', () => {
    for (const module of MODULES) {
      const sm = statementsOf(module).filter((s) =>
        actionsOf(s).some((a) => a.startsWith('secretsmanager:')),
      );
      if (MODULE_ACCESS[module].secrets === 'none') {
        if (MODULE_ACCESS[module].payments) {
          // Billing reads one secret only: Stripe's keys, by its exact ARN.
          assert.deepEqual(
            sm.map((st) => [[...actionsOf(st)].sort(), st.Resource]),
            [
              [
                ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'],
                { Ref: stateless.getLogicalId(stateless.billing.stripeSecret.node.defaultChild as never) },
              ],
            ],
            module,
          );
          continue;
        }
        assert.deepEqual(sm, [], module);
        continue;
      }
      const access = MODULE_ACCESS[module].secrets;
      assert.ok(access === 'write' || access === 'read', `${module}: update this test for ${access} access`);
      const onPrefix = sm.filter((s) => JSON.stringify(resourcesOf(s)).includes(':secret:agenthost/*'));
      assert.equal(onPrefix.length, 1, module);
      const expected = access === 'write' ? SECRETS_WRITE_ACTIONS : SECRETS_READ_ACTIONS;
      assert.deepEqual([...actionsOf(onPrefix[0] as Statement)].sort(), [...expected].sort(), module);
      // The functions that call models also read the provider-keys secret, by its exact ARN.
      const providerKeys = {
        Ref: stateless.getLogicalId(stateless.providerKeys.secret.node.defaultChild as never),
      };
      const keyReads = sm.filter((s) => JSON.stringify(s.Resource) === JSON.stringify(providerKeys));
      assert.equal(keyReads.length, MODULE_ACCESS[module].llm ? 1 : 0, module);
      const elsewhere = sm.filter((s) => !onPrefix.includes(s) && !keyReads.includes(s));
      if (access === 'write') assert.deepEqual(elsewhere, [], module);
      else {
        // BatchGetSecretValue has no resource-level permission; each value it returns is still
        // checked against GetSecretValue on the prefix.
        assert.deepEqual(
          elsewhere.flatMap((s) => [...actionsOf(s)]),
          ['secretsmanager:BatchGetSecretValue'],
          module,
        );
      }
    }
  });

  test('TABLE_ACTIONS covers every command the DynamoDB adapter sends, and no more', () => {
    const source = readFileSync(join(PROJECT_ROOT, 'functions/adapters/aws/dynamodb-store.ts'), 'utf8');
    const commands = new Set([...source.matchAll(/new (\w+)Command\(/g)].map((m) => m[1]));
    const needs: Record<string, string[]> = {
      Get: ['dynamodb:GetItem'],
      Put: ['dynamodb:PutItem'],
      Update: ['dynamodb:UpdateItem'],
      Delete: ['dynamodb:DeleteItem'],
      Query: ['dynamodb:Query'],
      TransactWrite: [
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
        'dynamodb:ConditionCheckItem',
      ],
    };
    const required = new Set<string>();
    for (const command of commands) {
      const actions = needs[command as string];
      assert.ok(
        actions,
        `dynamodb-store.ts sends ${command}Command: add its IAM actions to TABLE_ACTIONS and this map`,
      );
      for (const a of actions) required.add(a);
    }
    assert.deepEqual([...required].sort(), [...TABLE_ACTIONS].sort());
  });
});

describe('stateless stack: billing (docs/billing.md)', () => {
  const logicalId = (c: IConstruct) => stateless.getLogicalId(c.node.defaultChild as never);

  test('Stripe’s keys in one Secrets Manager secret that only the billing function reads; housekeeping every five minutes', () => {
    const secretId = logicalId(stateless.billing.stripeSecret);
    assert.equal(statelessJson.Resources[secretId]?.Type, 'AWS::SecretsManager::Secret');
    const env = (statelessJson.Resources[functionLogicalId('billing')] as CfnResourceJson).Properties
      .Environment as {
      Variables: Record<string, unknown>;
    };
    assert.deepEqual(env.Variables.PLATFORM_STRIPE_SECRET_ARN, { Ref: secretId });
    assert.equal(env.Variables.PLATFORM_PAYMENTS, 'stripe');
    const readers = resourcesOfType('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes(`"Ref":"${secretId}"`))
      .flatMap(([, p]) => (p.Properties.Roles as { Ref: string }[]).map((r) => r.Ref));
    assert.deepEqual(readers, [logicalId(stateless.functions.billing.role)]);
    statelessTemplate.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [logicalId(stateless.billing.housekeepingFunction.function), 'Arn'] },
        }),
      ],
    });
  });

  test('the payment webhook is a public route; the rest of /billing needs a key', () => {
    const byPath = new Map(routeList.map(([, r]) => [`${r.method} ${r.path}`, r.auth]));
    assert.equal(byPath.get('POST /billing/webhook'), 'none');
    assert.equal(byPath.get('GET /billing/balance'), 'api-key');
    assert.equal(byPath.get('POST /billing/checkout'), 'api-key');
  });
});

describe('stateless stack: model provider keys (docs/deploy.md)', () => {
  test('one secret, readable by exactly the functions that call models, which get its ARN and no key', () => {
    const secretId = stateless.getLogicalId(stateless.providerKeys.secret.node.defaultChild as never);
    const secret = statelessJson.Resources[secretId];
    assert.equal(secret?.Type, 'AWS::SecretsManager::Secret');
    assert.equal(secret?.Properties.SecretString, '{}', 'created empty: the operator puts the keys in');
    const fnId = (fn: { function: { node: { defaultChild: unknown } } }) =>
      stateless.getLogicalId(fn.function.node.defaultChild as never);
    const readers = new Set([
      fnId(stateless.functions.calls),
      fnId(stateless.functions.mcp),
      fnId(stateless.functions['schedule-runs']),
      fnId(stateless.schedules.fireFunction),
      Stack.of(stateless.runs.worker).getLogicalId(stateless.runs.worker.function.node.defaultChild as never),
    ]);
    for (const [id, fn] of platformFunctions()) {
      const env = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      for (const name of Object.keys(env))
        assert.doesNotMatch(name, /_API_KEY$/, `${id}: no key in the environment`);
      if (readers.has(id)) assert.deepEqual(env.PLATFORM_LLM_SECRET_ARN, { Ref: secretId }, id);
      else assert.equal(env.PLATFORM_LLM_SECRET_ARN, undefined, id);
    }
    const granted = resourcesOfType('AWS::IAM::Policy').filter(([, pol]) =>
      JSON.stringify(pol.Properties.PolicyDocument).includes(`{"Ref":"${secretId}"}`),
    );
    const roles = granted.flatMap(([, pol]) => (pol.Properties.Roles as { Ref: string }[]).map((r) => r.Ref));
    const roleId = (fn: { role: { node: { defaultChild: unknown } } }) =>
      stateless.getLogicalId(fn.role.node.defaultChild as never);
    assert.deepEqual(
      roles.sort(),
      [
        roleId(stateless.functions.calls),
        roleId(stateless.functions.mcp),
        roleId(stateless.functions['schedule-runs']),
        roleId(stateless.schedules.fireFunction),
        Stack.of(stateless.runs.worker).getLogicalId(stateless.runs.worker.role.node.defaultChild as never),
      ].sort(),
    );
  });
});
