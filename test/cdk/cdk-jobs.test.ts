/**
 * What runs beside the API on the synthesized stateless stack: schedule firing (docs/schedules.md),
 * always-on service hosting (docs/services.md) and the run worker (docs/runs.md, "Long runs"):
 * their resources, roles and events. One file, so the stacks are synthesized once for them.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';
import { MAX_RUN_TIMEOUT_SECONDS } from '../../functions/core/agents/manifest-limits.ts';
import { MODULES } from '../../functions/platform/routes.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { addAgenthostStacks } from '../../lib/agenthost-app.ts';
import { RUN_WORKER_ALIAS } from '../../lib/constructs/run-worker.ts';
import type { ServiceHosting } from '../../lib/constructs/service-hosting.ts';
import { MODULE_ACCESS } from '../../lib/module-access.ts';
import { foldedTemplate } from '../helpers/folded-template.ts';
import {
  type CfnResourceJson,
  SERVICES,
  synthesizeStacks,
  templatesApp,
} from '../helpers/synthesized-stacks.ts';

const { outdir, stateless, statelessTemplate, statelessJson, resourcesOfType, functionLogicalId } =
  synthesizeStacks();
after(() => rmSync(outdir, { recursive: true, force: true }));

describe('stateless stack: schedule firing (docs/schedules.md)', () => {
  type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };
  const logicalId = (c: IConstruct) => stateless.getLogicalId(c.node.defaultChild as never);
  const firing = stateless.schedules;
  const statementsOfRole = (roleId: string): Statement[] =>
    resourcesOfType('AWS::IAM::Policy')
      .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  const actions = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);
  const envOf = (fn: { function: IConstruct }) =>
    (
      (statelessJson.Resources[logicalId(fn.function)] as CfnResourceJson).Properties.Environment as {
        Variables: Record<string, unknown>;
      }
    ).Variables;

  test('one schedule group, an encrypted TLS-only dead-letter queue, and the fire and alert functions', () => {
    statelessTemplate.resourceCountIs('AWS::Scheduler::ScheduleGroup', 1);
    statelessTemplate.hasResourceProperties('AWS::Scheduler::ScheduleGroup', {
      Name: 'AgenthostStateless-schedules',
    });
    statelessTemplate.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
    statelessTemplate.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
    const fire = statelessJson.Resources[logicalId(firing.fireFunction.function)];
    assert.equal(fire?.Properties.Timeout, 330, 'above the 300 s run cap');
    assert.equal(envOf(firing.fireFunction).PLATFORM_MAX_CALL_SECONDS, '300');
    // No schedule is created by the stack: they are made per record at run time.
    statelessTemplate.resourceCountIs('AWS::Scheduler::Schedule', 0);
  });

  test('a failed fire is retried by Lambda, then recorded in the dead-letter queue; alert delivery retries itself', () => {
    const configs = resourcesOfType('AWS::Lambda::EventInvokeConfig');
    const configOf = (fn: { function: { node: { defaultChild: unknown } } }) => {
      const name = { Ref: logicalId(fn.function as never) };
      const found = configs.filter(
        ([, c]) => JSON.stringify(c.Properties.FunctionName) === JSON.stringify(name),
      );
      assert.equal(found.length, 1);
      return (found[0] as [string, CfnResourceJson])[1].Properties;
    };
    const fire = configOf(firing.fireFunction);
    assert.equal(fire.MaximumRetryAttempts, 2);
    assert.equal(fire.MaximumEventAgeInSeconds, 3600);
    assert.deepEqual(fire.DestinationConfig, {
      OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(firing.deadLetters), 'Arn'] } },
    });
    // The fire function may send there (the destination acts with its role).
    const sends = statementsOfRole(logicalId(firing.fireFunction.role)).filter((st) =>
      actions(st).includes('sqs:SendMessage'),
    );
    assert.deepEqual(
      sends.map((st) => st.Resource),
      [{ 'Fn::GetAtt': [logicalId(firing.deadLetters), 'Arn'] }],
    );
    assert.equal(configOf(firing.alertsFunction).MaximumRetryAttempts, 0);
  });

  test('the invoke role is assumable by EventBridge Scheduler of this account only, and may invoke the fire function and dead-letter, nothing else', () => {
    const role = statelessJson.Resources[logicalId(firing.invokeRole)];
    const trust = (
      (role as CfnResourceJson).Properties.AssumeRolePolicyDocument as {
        Statement: Statement[] & { Principal: unknown }[];
      }
    ).Statement[0] as unknown as { Principal: unknown; Condition: Record<string, Record<string, unknown>> };
    assert.deepEqual(trust.Principal, { Service: 'scheduler.amazonaws.com' });
    assert.deepEqual(trust.Condition.StringEquals, { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } });
    // The group's ARN, which is what Scheduler presents (a schedule's ARN would never match).
    assert.equal(trust.Condition.ArnLike, undefined);
    assert.match(JSON.stringify(trust.Condition.ArnEquals), /:schedule-group\/AgenthostStateless-schedules"/);
    const statements = statementsOfRole(logicalId(firing.invokeRole));
    assert.deepEqual(
      statements.map((st) => [actions(st), st.Resource]),
      [
        [['lambda:InvokeFunction'], { 'Fn::GetAtt': [logicalId(firing.fireFunction.function), 'Arn'] }],
        [['sqs:SendMessage'], { 'Fn::GetAtt': [logicalId(firing.deadLetters), 'Arn'] }],
      ],
    );
  });

  test('only the schedules module manages schedules (with the target in its environment); the run paths may only delete them', () => {
    const onSchedules = (roleId: string) =>
      statementsOfRole(roleId)
        .filter((st) => actions(st).some((a) => a.startsWith('scheduler:')))
        .map((st) => {
          assert.match(JSON.stringify(st.Resource), /:schedule\/AgenthostStateless-schedules\/\*/);
          return [...actions(st)].sort();
        });
    for (const module of MODULES) {
      const got = onSchedules(logicalId(stateless.functions[module].role));
      const want = MODULE_ACCESS[module].scheduler;
      if (want === 'manage') {
        assert.deepEqual(
          got,
          [['scheduler:CreateSchedule', 'scheduler:DeleteSchedule', 'scheduler:UpdateSchedule']],
          module,
        );
        const env = envOf(stateless.functions[module]);
        assert.deepEqual(env.PLATFORM_SCHEDULE_TARGET_ARN, {
          'Fn::GetAtt': [logicalId(firing.fireFunction.function), 'Arn'],
        });
        assert.deepEqual(env.PLATFORM_SCHEDULE_ROLE_ARN, {
          'Fn::GetAtt': [logicalId(firing.invokeRole), 'Arn'],
        });
        assert.deepEqual(env.PLATFORM_SCHEDULE_DLQ_ARN, {
          'Fn::GetAtt': [logicalId(firing.deadLetters), 'Arn'],
        });
      } else if (want === 'remove') {
        assert.deepEqual(got, [['scheduler:DeleteSchedule']], module);
      } else {
        assert.deepEqual(got, [], module);
      }
    }
    assert.deepEqual(onSchedules(logicalId(firing.fireFunction.role)), [['scheduler:DeleteSchedule']]);
    assert.equal(envOf(firing.fireFunction).PLATFORM_SCHEDULE_TARGET_ARN, undefined);
  });

  test('the alert-delivery function has no data access, and only the run paths may invoke it', () => {
    const alertsRole = logicalId(firing.alertsFunction.role);
    const reach = statementsOfRole(alertsRole)
      .flatMap(actions)
      .filter((a) => /^(dynamodb|s3|secretsmanager|scheduler|ecs|lambda):/.test(a));
    assert.deepEqual(reach, []);
    const alertsArn = JSON.stringify({ 'Fn::GetAtt': [logicalId(firing.alertsFunction.function), 'Arn'] });
    const invokers = resourcesOfType('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes(alertsArn))
      .flatMap(([, p]) => (p.Properties.Roles as { Ref: string }[]).map((r) => r.Ref))
      .sort();
    assert.deepEqual(
      invokers,
      [
        // A run's completion webhook (docs/runs.md, "Told when it ends"), sent as an alert is.
        logicalId(stateless.functions.calls.role),
        logicalId(stateless.functions['schedule-runs'].role),
        logicalId(firing.fireFunction.role),
        logicalId((stateless.services as ServiceHosting).eventsFunction.role),
        // The run worker ends the runs it carries on (docs/runs.md, "Long runs").
        Stack.of(stateless.runs.worker).getLogicalId(stateless.runs.worker.role.node.defaultChild as never),
      ].sort(),
    );
  });
});

describe('stateless stack: service hosting (docs/services.md)', () => {
  const logicalId = (c: IConstruct) => stateless.getLogicalId(c.node.defaultChild as never);
  const hosting = stateless.services as ServiceHosting;

  test('an internet-facing load balancer with an HTTPS listener on the given certificate, 404 by default', () => {
    statelessTemplate.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', {
      Scheme: 'internet-facing',
      LoadBalancerAttributes: Match.arrayWith([
        { Key: 'routing.http.drop_invalid_header_fields.enabled', Value: 'true' },
      ]),
    });
    const listeners = resourcesOfType('AWS::ElasticLoadBalancingV2::Listener');
    assert.equal(listeners.length, 1, 'HTTPS only');
    const [, listener] = listeners[0] as [string, CfnResourceJson];
    assert.equal(listener.Properties.Protocol, 'HTTPS');
    assert.equal(listener.Properties.Port, 443);
    assert.deepEqual(listener.Properties.Certificates, [{ CertificateArn: SERVICES.certificateArn }]);
    assert.match(JSON.stringify(listener.Properties.DefaultActions), /"StatusCode":"404"/);
  });

  test('tasks take the gateway port from the load balancer only; they have no task role; the execution role reads only this prefix’s secrets', () => {
    const sg = statelessJson.Resources[logicalId(hosting.taskSecurityGroup)] as CfnResourceJson;
    const ingress = resourcesOfType('AWS::EC2::SecurityGroupIngress').filter(([, r]) =>
      JSON.stringify(r.Properties.GroupId).includes(`"${logicalId(hosting.taskSecurityGroup)}"`),
    );
    assert.equal(sg.Properties.SecurityGroupIngress, undefined);
    assert.deepEqual(
      ingress.map(([, r]) => [
        r.Properties.FromPort,
        r.Properties.ToPort,
        JSON.stringify(r.Properties.SourceSecurityGroupId),
      ]),
      [
        [
          8080,
          8080,
          JSON.stringify({
            'Fn::GetAtt': [
              logicalId(hosting.loadBalancer.connections.securityGroups[0] as IConstruct),
              'GroupId',
            ],
          }),
        ],
      ],
    );
    const policies = resourcesOfType('AWS::IAM::Policy').filter(([, p]) =>
      (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === logicalId(hosting.executionRole)),
    );
    const statements = policies.flatMap(
      ([, p]) =>
        (p.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] })
          .Statement,
    );
    const secretReads = statements.filter((st) => JSON.stringify(st.Action).includes('secretsmanager'));
    assert.deepEqual(
      secretReads.map((st) => st.Action),
      ['secretsmanager:GetSecretValue'],
    );
    assert.match(JSON.stringify(secretReads[0]?.Resource), /:secret:agenthost\/\*/);
  });

  test('every task state change of the cluster reaches the service-events function', () => {
    statelessTemplate.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.ecs'],
        'detail-type': ['ECS Task State Change'],
        detail: { clusterArn: [{ 'Fn::GetAtt': [logicalId(hosting.cluster), 'Arn'] }] },
      },
      Targets: [
        Match.objectLike({ Arn: { 'Fn::GetAtt': [logicalId(hosting.eventsFunction.function), 'Arn'] } }),
      ],
    });
    const env = (statelessJson.Resources[functionLogicalId('services')] as CfnResourceJson).Properties
      .Environment as {
      Variables: Record<string, unknown>;
    };
    assert.equal(env.Variables.PLATFORM_SERVICES_DOMAIN, SERVICES.domain);
    assert.deepEqual(env.Variables.PLATFORM_SERVICES_EXECUTION_ROLE_ARN, {
      'Fn::GetAtt': [logicalId(hosting.executionRole), 'Arn'],
    });
  });

  test('without a domain and certificate no hosting is built, and the services function has no service settings', () => {
    const otherDir = mkdtempSync(join(tmpdir(), 'agenthost-cdk-s-'));
    after(() => rmSync(otherDir, { recursive: true, force: true }));
    const other = templatesApp(otherDir);
    const stacks = addAgenthostStacks(other);
    assert.equal(stacks.stateless.services, undefined);
    const template = foldedTemplate(stacks.stateless);
    template.resourceCountIs('AWS::ElasticLoadBalancingV2::LoadBalancer', 0);
    const fn = (template.toJSON().Resources as Record<string, CfnResourceJson>)[
      stacks.stateless.getLogicalId(
        stacks.stateless.functions.services.function.node.defaultChild as CfnFunction,
      )
    ] as CfnResourceJson;
    const vars = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    assert.equal(vars.PLATFORM_SERVICES_CLUSTER, undefined);
  });
});

type WorkerStatement = { Action: string | string[]; Resource: unknown };
const idOf = (c: IConstruct) => Stack.of(c).getLogicalId(c.node.defaultChild as never);
const workerActions = (s: WorkerStatement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);
const workerStatementsOfRole = (roleId: string): WorkerStatement[] =>
  resourcesOfType('AWS::IAM::Policy')
    .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: WorkerStatement[] }).Statement);

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
        (p.Properties.PolicyDocument as { Statement: WorkerStatement[] }).Statement.some(
          (s) =>
            workerActions(s).includes('lambda:InvokeFunction') &&
            JSON.stringify(s.Resource).includes(aliasRef),
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
    const lambda = workerStatementsOfRole(idOf(runs.worker.role)).filter((s) =>
      workerActions(s).some((a) => a.startsWith('lambda:')),
    );
    const workerArn = JSON.stringify({ 'Fn::GetAtt': [idOf(runs.worker.function), 'Arn'] });
    const own = lambda.filter((s) => JSON.stringify(s.Resource).includes(workerArn));
    assert.deepEqual(own.flatMap(workerActions).sort(), [
      'lambda:CheckpointDurableExecution',
      'lambda:GetDurableExecutionState',
    ]);
    assert.match(JSON.stringify(own[0]?.Resource), /:\*"/, 'its executions, of any version');
    // Besides, it queues a run's completion webhook to the alert-delivery function.
    const others = lambda.filter((s) => !own.includes(s)).flatMap(workerActions);
    assert.deepEqual(others, ['lambda:InvokeFunction']);
  });
});
