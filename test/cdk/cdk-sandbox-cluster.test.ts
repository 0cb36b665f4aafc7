/**
 * The sandbox cluster on the synthesized stateless stack (docs/sandbox-aws.md): its task definition,
 * network, S3 gateway endpoint, logs, and who may run its tasks.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import type { IConstruct } from 'constructs';
import { RUNNER_BOOTSTRAP } from '../../functions/containers/sandbox-protocol.ts';
import { MODULES } from '../../functions/platform/routes.ts';
import { SANDBOX_OBJECT_ACTIONS } from '../../lib/constructs/sandbox-cluster.ts';
import type { ServiceHosting } from '../../lib/constructs/service-hosting.ts';
import { MODULE_ACCESS } from '../../lib/module-access.ts';
import { type CfnResourceJson, synthesizeStacks } from '../helpers/synthesized-stacks.ts';

const { outdir, stateless, statelessTemplate, statelessJson, resourcesOfType, functionLogicalId } =
  synthesizeStacks();
after(() => rmSync(outdir, { recursive: true, force: true }));

describe('stateless stack: sandbox cluster (docs/sandbox-aws.md)', () => {
  type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };
  const logicalId = (c: IConstruct) => stateless.getLogicalId(c.node.defaultChild as never);
  const sandbox = stateless.sandbox;
  const [, taskDefinition] = resourcesOfType('AWS::ECS::TaskDefinition')[0] ?? [];
  const statementsOfRole = (roleId: string): Statement[] =>
    resourcesOfType('AWS::IAM::Policy')
      .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  const actions = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);

  test('one Fargate ARM64 task definition with no task role, the execution role only, and the runner', () => {
    assert.equal(resourcesOfType('AWS::ECS::TaskDefinition').length, 1);
    assert.ok(taskDefinition);
    const p = taskDefinition.Properties;
    assert.equal(p.TaskRoleArn, undefined);
    assert.deepEqual(p.ExecutionRoleArn, { 'Fn::GetAtt': [logicalId(sandbox.executionRole), 'Arn'] });
    assert.deepEqual(p.RequiresCompatibilities, ['FARGATE']);
    assert.equal(p.NetworkMode, 'awsvpc');
    assert.deepEqual(p.RuntimePlatform, { CpuArchitecture: 'ARM64', OperatingSystemFamily: 'LINUX' });
    const [container, ...others] = p.ContainerDefinitions as Record<string, unknown>[];
    assert.equal(others.length, 0);
    assert.equal(container?.Name, 'runner');
    assert.deepEqual(container?.EntryPoint, ['node', '-e', RUNNER_BOOTSTRAP]);
    assert.equal(container?.Environment, undefined);
    assert.equal((container?.LogConfiguration as { LogDriver?: string } | undefined)?.LogDriver, 'awslogs');
    // The only roles ECS tasks can assume here are the two execution roles (sandbox, services):
    // no task role anywhere, so user code never gets AWS credentials.
    const taskRoles = resourcesOfType('AWS::IAM::Role').filter(([, r]) =>
      JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('ecs-tasks.amazonaws.com'),
    );
    assert.deepEqual(
      taskRoles.map(([id]) => id).sort(),
      [
        logicalId(sandbox.executionRole),
        logicalId((stateless.services as ServiceHosting).executionRole),
      ].sort(),
    );
  });

  test('the tasks’ security group has no ingress and only HTTPS egress; no NAT, no internet gateway', () => {
    const sgId = logicalId(sandbox.securityGroup);
    const sg = statelessJson.Resources[sgId];
    assert.ok(sg);
    assert.equal(sg.Properties.SecurityGroupIngress, undefined);
    assert.deepEqual(
      resourcesOfType('AWS::EC2::SecurityGroupIngress').filter(([, r]) =>
        JSON.stringify(r.Properties.GroupId).includes(`"${sgId}"`),
      ),
      [],
    );
    const egress = sg.Properties.SecurityGroupEgress as Record<string, unknown>[];
    assert.deepEqual(
      egress.map((e) => ({
        CidrIp: e.CidrIp,
        IpProtocol: e.IpProtocol,
        FromPort: e.FromPort,
        ToPort: e.ToPort,
      })),
      [{ CidrIp: '0.0.0.0/0', IpProtocol: 'tcp', FromPort: 443, ToPort: 443 }],
    );
    // In the sandbox's VPC (the services' VPC has its own NAT and public subnets, by design).
    const inSandboxVpc = ([id]: [string, CfnResourceJson]) => id.startsWith('SandboxVpc');
    for (const type of ['AWS::EC2::NatGateway', 'AWS::EC2::InternetGateway', 'AWS::EC2::EIP']) {
      assert.equal(resourcesOfType(type).filter(inSandboxVpc).length, 0, type);
    }
    const subnets = resourcesOfType('AWS::EC2::Subnet').filter(inSandboxVpc);
    assert.ok(subnets.length >= 2);
    for (const [, subnet] of subnets) {
      assert.equal(subnet.Properties.MapPublicIpOnLaunch, false);
    }
  });

  test('the S3 gateway endpoint admits only the runner’s GET of inputs and agent bundles, PUT of results and image layers', () => {
    const endpoints = resourcesOfType('AWS::EC2::VPCEndpoint');
    const gateway = endpoints.filter(([, e]) => e.Properties.VpcEndpointType === 'Gateway');
    assert.equal(gateway.length, 1);
    const [[, endpoint]] = gateway as [[string, CfnResourceJson]];
    const policy = (endpoint.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
    assert.deepEqual(
      policy.map((st) => [
        actions(st),
        JSON.stringify(st.Resource).match(/sandbox-\w+|\/bundles\/[^"]*|starport-layer-bucket/g),
      ]),
      [
        // An agent version's archive, read in place (never a payload: bundles/payloads/…/*.json).
        [
          ['s3:GetObject'],
          ['sandbox-inputs', '/bundles/*.tar.gz', '/bundles/*.zip', 'starport-layer-bucket'],
        ],
        // ECS's agent finds the bucket before it reads a task's env file (the execution role).
        [['s3:GetBucketLocation'], null],
        [['s3:PutObject'], ['sandbox-results']],
      ],
    );
    assert.deepEqual(
      endpoints
        .filter(([, e]) => e.Properties.VpcEndpointType === 'Interface')
        .map(([, e]) => JSON.stringify(e.Properties.ServiceName).match(/\.(ecr\.api|ecr\.dkr|logs)"/)?.[1])
        .sort(),
      ['ecr.api', 'ecr.dkr', 'logs'],
    );
  });

  test('the log group has retention; the cluster has Container Insights', () => {
    assert.ok(statelessJson.Resources[logicalId(sandbox.logGroup)]?.Properties.RetentionInDays);
    statelessTemplate.hasResourceProperties('AWS::ECS::Cluster', {
      ClusterSettings: [{ Name: 'containerInsights', Value: 'enabled' }],
    });
  });

  test('the run paths may RunTask only this task definition, and nothing else may touch ECS', () => {
    const runners = [
      ...MODULES.filter((m) => MODULE_ACCESS[m].sandbox).map((m) => stateless.functions[m]),
      stateless.schedules.fireFunction,
    ];
    assert.equal(runners.length, 4, 'calls, mcp, schedule-runs and the fire function');
    for (const fn of runners) {
      const statements = statementsOfRole(logicalId(fn.role));
      const run = statements.filter((s) => actions(s).includes('ecs:RunTask'));
      assert.equal(run.length, 1);
      assert.deepEqual(actions(run[0] as Statement), ['ecs:RunTask']);
      assert.deepEqual((run[0] as Statement).Resource, { Ref: logicalId(sandbox.taskDefinition) });
      assert.deepEqual((run[0] as Statement).Condition, {
        ArnEquals: { 'ecs:cluster': { 'Fn::GetAtt': [logicalId(sandbox.cluster), 'Arn'] } },
      });
      const pass = statements.filter((s) => actions(s).includes('iam:PassRole'));
      assert.deepEqual(
        pass.map((s) => s.Resource),
        [{ 'Fn::GetAtt': [logicalId(sandbox.executionRole), 'Arn'] }],
      );
      const objects = statements.filter((s) =>
        /\/sandbox-(inputs|results)\/\*/.test(JSON.stringify(s.Resource)),
      );
      assert.equal(objects.length, 1);
      assert.deepEqual([...actions(objects[0] as Statement)].sort(), [...SANDBOX_OBJECT_ACTIONS].sort());
    }
    for (const module of MODULES.filter((m) => !MODULE_ACCESS[m].sandbox)) {
      const roleId = logicalId(stateless.functions[module].role);
      const ecsStatements = statementsOfRole(roleId).filter((st) =>
        actions(st).some((a) => a.startsWith('ecs:')),
      );
      if (MODULE_ACCESS[module].services) {
        // Service management: never RunTask; only svc-* services and agenthost-svc-* task definitions.
        for (const st of ecsStatements) {
          assert.ok(!actions(st).includes('ecs:RunTask'), module);
          const where = JSON.stringify(st.Resource);
          assert.ok(
            where === '"*"' ? actions(st).join() === 'ecs:RegisterTaskDefinition' : /svc-\*/.test(where),
            `${module}: ${actions(st).join()} on ${where}`,
          );
        }
      } else {
        assert.deepEqual(ecsStatements.flatMap(actions), [], module);
      }
      const pass = statementsOfRole(roleId).filter((s) => actions(s).includes('iam:PassRole'));
      if (MODULE_ACCESS[module].services) {
        // Only the services' execution role, and only to ECS tasks.
        assert.deepEqual(
          pass.map((s) => [s.Resource, s.Condition]),
          [
            [
              { 'Fn::GetAtt': [logicalId((stateless.services as ServiceHosting).executionRole), 'Arn'] },
              { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } },
            ],
          ],
          module,
        );
      } else if (MODULE_ACCESS[module].scheduler === 'manage') {
        // Only the scheduler's invoke role, and only to EventBridge Scheduler.
        assert.deepEqual(
          pass.map((s) => [s.Resource, s.Condition]),
          [
            [
              { 'Fn::GetAtt': [logicalId(stateless.schedules.invokeRole), 'Arn'] },
              { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
            ],
          ],
          module,
        );
      } else assert.deepEqual(pass, [], module);
    }
    const callsFunction = statelessJson.Resources[functionLogicalId('calls')];
    assert.ok(callsFunction);
    const env = (callsFunction.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    assert.deepEqual(env.PLATFORM_SANDBOX_CLUSTER, { Ref: logicalId(sandbox.cluster) });
    assert.deepEqual(env.PLATFORM_SANDBOX_TASK_DEFINITION, { Ref: logicalId(sandbox.taskDefinition) });
    assert.deepEqual(env.PLATFORM_SANDBOX_SECURITY_GROUPS, {
      'Fn::GetAtt': [logicalId(sandbox.securityGroup), 'GroupId'],
    });
    assert.match(JSON.stringify(env.PLATFORM_SANDBOX_SUBNETS), /"Fn::Join":\[",",\[\{"Ref":"SandboxVpc/);
  });
});
