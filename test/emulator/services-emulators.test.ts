import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  ApplicationAutoScalingClient,
  DeregisterScalableTargetCommand,
  ObjectNotFoundException,
  RegisterScalableTargetCommand,
} from '@aws-sdk/client-application-auto-scaling';
import { CloudWatchLogsClient, FilterLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import {
  CreateRuleCommand,
  CreateTargetGroupCommand,
  DeleteRuleCommand,
  DeleteTargetGroupCommand,
  DescribeRulesCommand,
  DescribeTargetGroupsCommand,
  ElasticLoadBalancingV2Client,
  PriorityInUseException,
  ResourceInUseException,
  TargetGroupNotFoundException,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { ApplicationAutoScalingEmulator } from '../../functions/emulator/application-auto-scaling-emulator.ts';
import { TemplateResolver } from '../../functions/emulator/cloudformation-template.ts';
import { CloudWatchLogsEmulator } from '../../functions/emulator/cloudwatch-logs-emulator.ts';
import { Elbv2Emulator } from '../../functions/emulator/elbv2-emulator.ts';
import { matchesPattern } from '../../functions/emulator/event-pattern-rules.ts';
import { LoadBalancerFront } from '../../functions/emulator/load-balancer-front.ts';
import { listenerOnlyStack } from '../helpers/emulated-aws.ts';

/**
 * The stand-ins always-on services need on the emulated deployment, through the unchanged SDK
 * clients the ECS service runner uses: Elastic Load Balancing v2 (Query/XML, with the errors the
 * runner catches by class) and its loopback front routing by Host, Application Auto Scaling,
 * CloudWatch Logs' FilterLogEvents, and EventBridge pattern matching.
 */

/** A GET with the given Host header (fetch does not let a caller set Host). */
function getWithHost(port: number, host: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const account = { region: 'us-east-1', accountId: '000000000000' };
const credentials = { accessKeyId: 'x', secretAccessKey: 'y' };
const resolver = new TemplateResolver(
  [
    listenerOnlyStack('Stack', {
      StatusCode: '404',
      ContentType: 'application/json',
      MessageBody: '{"nope":1}',
    }),
  ],
  account,
);

describe('ELBv2 emulator and the load balancer front', () => {
  let elb: Elbv2Emulator;
  let front: LoadBalancerFront;
  let client: ElasticLoadBalancingV2Client;
  let app: Server;
  let frontPort: number;
  let listenerArn: string;

  before(async () => {
    elb = new Elbv2Emulator(resolver, account);
    const endpoint = await elb.listen(0, '127.0.0.1');
    client = new ElasticLoadBalancingV2Client({ endpoint, region: account.region, credentials });
    listenerArn = elb.listenerArns()[0] as string;
    front = new LoadBalancerFront(elb, listenerArn);
    frontPort = await front.listen(0, '127.0.0.1');
    app = createServer((req, res) => {
      if (req.url === '/health') return res.end('ok');
      res.end(
        JSON.stringify({ host: req.headers.host, path: req.url, proto: req.headers['x-forwarded-proto'] }),
      );
    });
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', () => r()));
  });
  after(async () => {
    client.destroy();
    await front.close();
    await elb.close();
    app.close();
  });

  it('creates target groups idempotently, forwards by Host through rules, answers the default for other hosts', async () => {
    const input = {
      Name: 'svc-abc',
      Protocol: 'HTTP' as const,
      Port: 8080,
      VpcId: 'vpc-1',
      TargetType: 'ip' as const,
      HealthCheckPath: '/health',
      HealthyThresholdCount: 2,
      Matcher: { HttpCode: '200' },
    };
    const created = await client.send(new CreateTargetGroupCommand(input));
    const arn = created.TargetGroups?.[0]?.TargetGroupArn as string;
    assert.match(
      arn,
      /^arn:aws:elasticloadbalancing:us-east-1:000000000000:targetgroup\/svc-abc\/[0-9a-f]{16}$/,
    );
    const again = await client.send(new CreateTargetGroupCommand(input));
    assert.equal(again.TargetGroups?.[0]?.TargetGroupArn, arn);
    assert.equal(listenerArn.includes(':listener/app/'), true, listenerArn);

    const rule = await client.send(
      new CreateRuleCommand({
        ListenerArn: listenerArn,
        Priority: 7,
        Conditions: [{ Field: 'host-header', HostHeaderConfig: { Values: ['web-1.services.localhost'] } }],
        Actions: [{ Type: 'forward', TargetGroupArn: arn }],
      }),
    );
    const ruleArn = rule.Rules?.[0]?.RuleArn as string;
    await assert.rejects(
      client.send(
        new CreateRuleCommand({
          ListenerArn: listenerArn,
          Priority: 7,
          Conditions: [{ Field: 'host-header', HostHeaderConfig: { Values: ['other.services.localhost'] } }],
          Actions: [{ Type: 'forward', TargetGroupArn: arn }],
        }),
      ),
      PriorityInUseException,
    );
    const rules = await client.send(new DescribeRulesCommand({ ListenerArn: listenerArn }));
    assert.deepEqual(
      rules.Rules?.map((r) => [r.Priority, r.Actions?.[0]?.TargetGroupArn ?? r.Actions?.[0]?.Type]),
      [
        ['7', arn],
        ['default', 'fixed-response'],
      ],
    );

    const none = await getWithHost(frontPort, 'web-1.services.localhost', '/x?y=1');
    assert.equal(none.status, 503, 'no registered target');
    elb.registerTarget(arn, 'task-1', (app.address() as AddressInfo).port);
    const routed = await getWithHost(frontPort, `WEB-1.services.localhost:${frontPort}`, '/x?y=1');
    assert.equal(routed.status, 200);
    assert.deepEqual(JSON.parse(routed.body), {
      host: `WEB-1.services.localhost:${frontPort}`,
      path: '/x?y=1',
      proto: 'https',
    });
    const other = await getWithHost(frontPort, 'nobody.services.localhost', '/');
    assert.equal(other.status, 404);
    assert.deepEqual(JSON.parse(other.body), { nope: 1 });

    await assert.rejects(
      client.send(new DeleteTargetGroupCommand({ TargetGroupArn: arn })),
      ResourceInUseException,
    );
    await client.send(new DeleteRuleCommand({ RuleArn: ruleArn }));
    await client.send(new DeleteTargetGroupCommand({ TargetGroupArn: arn }));
    await assert.rejects(
      client.send(new DescribeTargetGroupsCommand({ Names: ['svc-abc'] })),
      TargetGroupNotFoundException,
    );
  });
});

describe('Application Auto Scaling and CloudWatch Logs emulators', () => {
  it('registers scalable targets, applying their bounds; deregistering an unknown one is ObjectNotFound', async () => {
    const applied: unknown[] = [];
    const aas = new ApplicationAutoScalingEmulator({ ...account, applyBounds: (t) => applied.push(t) });
    const client = new ApplicationAutoScalingClient({
      endpoint: await aas.listen(0, '127.0.0.1'),
      region: account.region,
      credentials,
    });
    try {
      const target = {
        ServiceNamespace: 'ecs' as const,
        ResourceId: 'service/cluster/svc-1',
        ScalableDimension: 'ecs:service:DesiredCount' as const,
      };
      const out = await client.send(
        new RegisterScalableTargetCommand({ ...target, MinCapacity: 1, MaxCapacity: 3 }),
      );
      assert.match(String(out.ScalableTargetARN), /^arn:aws:application-autoscaling:/);
      assert.deepEqual(applied, [{ namespace: 'ecs', resourceId: 'service/cluster/svc-1', min: 1, max: 3 }]);
      await client.send(new DeregisterScalableTargetCommand(target));
      await assert.rejects(client.send(new DeregisterScalableTargetCommand(target)), ObjectNotFoundException);
    } finally {
      client.destroy();
      await aas.close();
    }
  });

  it('filters a group’s lines by stream prefix and time, in time order, with paging', async () => {
    const logs = new CloudWatchLogsEmulator(['/group']);
    const client = new CloudWatchLogsClient({
      endpoint: await logs.listen(0, '127.0.0.1'),
      region: account.region,
      credentials,
    });
    try {
      logs.putLine('/group', 'app/svc-1/app/t1', 'second', 2000);
      logs.putLine('/group', 'app/svc-1/app/t1', 'first', 1000);
      logs.putLine('/group', 'gateway/svc-1/gateway/t1', 'gateway line', 1500);
      logs.putLine('/group', 'app/svc-2/app/t2', 'other service', 1500);
      const out = await client.send(
        new FilterLogEventsCommand({ logGroupName: '/group', logStreamNamePrefix: 'app/svc-1' }),
      );
      assert.deepEqual(
        out.events?.map((e) => e.message),
        ['first', 'second'],
      );
      const later = await client.send(
        new FilterLogEventsCommand({
          logGroupName: '/group',
          logStreamNamePrefix: 'app/svc-1',
          startTime: 1500,
        }),
      );
      assert.deepEqual(
        later.events?.map((e) => e.message),
        ['second'],
      );
      const page = await client.send(new FilterLogEventsCommand({ logGroupName: '/group', limit: 2 }));
      assert.equal(page.events?.length, 2);
      const rest = await client.send(
        new FilterLogEventsCommand({ logGroupName: '/group', limit: 2, nextToken: page.nextToken }),
      );
      assert.equal(rest.events?.length, 2);
      assert.equal(rest.nextToken, undefined);
      await assert.rejects(
        client.send(new FilterLogEventsCommand({ logGroupName: '/missing' })),
        (err: Error) => err.name === 'ResourceNotFoundException',
      );
    } finally {
      client.destroy();
      await logs.close();
    }
  });

  it('matches EventBridge patterns as the task state change rule uses them', () => {
    const pattern = {
      source: ['aws.ecs'],
      'detail-type': ['ECS Task State Change'],
      detail: { clusterArn: ['arn:aws:ecs:us-east-1:000000000000:cluster/c'] },
    };
    const event = {
      source: 'aws.ecs',
      'detail-type': 'ECS Task State Change',
      detail: { clusterArn: 'arn:aws:ecs:us-east-1:000000000000:cluster/c', lastStatus: 'RUNNING' },
    };
    assert.equal(matchesPattern(pattern, event), true);
    assert.equal(matchesPattern(pattern, { ...event, detail: { clusterArn: 'other' } }), false);
    assert.equal(matchesPattern(pattern, { ...event, source: 'aws.ec2' }), false);
    assert.equal(
      matchesPattern({ detail: { group: [{ prefix: 'service:' }] } }, { detail: { group: 'service:svc-1' } }),
      true,
    );
  });
});
