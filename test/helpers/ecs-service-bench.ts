/**
 * The ECS service runner's test bench (test/adapters/ecs-service-*.test.ts): the AWS clients it
 * uses, mocked (aws-sdk-client-mock), a loopback stand-in for the bundle bucket that presigned
 * URLs point to, the task programs as the stack bundles them, and a runner and a launch to start.
 * A file that uses the bucket starts it in a `before` and closes it in an `after`.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationAutoScalingClient } from '@aws-sdk/client-application-auto-scaling';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { ECSClient } from '@aws-sdk/client-ecs';
import { ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';
import { mockClient } from 'aws-sdk-client-mock';
import type { ServicePresign } from '../../functions/adapters/aws/ecs-service-options.ts';
import { EcsServiceRunner } from '../../functions/adapters/aws/ecs-service-runner.ts';
import type { ServiceLaunch } from '../../functions/ports/service-runner.ts';
import { buildContainerProgram } from '../../lib/container-programs.ts';

export const ecs = mockClient(ECSClient);
export const elb = mockClient(ElasticLoadBalancingV2Client);
export const scaling = mockClient(ApplicationAutoScalingClient);
export const cwl = mockClient(CloudWatchLogsClient);

export const SERVICE_ID = '3f6c1d2e-8a9b-4c7d-9e0f-1a2b3c4d5e6f';
export const WS = '9e6d5062-83a1-47e9-9897-ec3a89db0394';
export const LISTENER = 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:listener/app/svc/abc/def';
export const TG_ARN =
  'arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/svc-3f6c1d2e8a9b4c7d9e0f1a2b3c4d/0123';

/** The task programs as the stack bundles them into the services functions' assets. */
export const GATEWAY = buildContainerProgram('service-gateway');
export const LAUNCHER = buildContainerProgram('service-app-launcher');

/**
 * A loopback stand-in for the bundle bucket: PUT stores an object, GET answers it (404 when
 * missing). Presigned URLs point here, with the method and lifetime in the query for assertions.
 */
export class BucketStandIn {
  readonly objects = new Map<string, Buffer>();
  readonly requests: { method: string; key: string }[] = [];
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const key = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname.slice(1));
      this.requests.push({ method: req.method ?? '', key });
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method === 'PUT') {
          this.objects.set(key, Buffer.concat(chunks));
          res.end();
          return;
        }
        const body = this.objects.get(key);
        res.writeHead(body ? 200 : 404);
        res.end(body ?? 'NoSuchKey');
      });
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  presign: ServicePresign = async (method, key, ttl) =>
    `${this.url}/${key.split('/').map(encodeURIComponent).join('/')}?method=${method}&ttl=${ttl}`;

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((r) => this.server?.close(r));
  }
}

export const bucket = new BucketStandIn();

export const runner = () =>
  new EcsServiceRunner({
    ecs: new ECSClient({ region: 'eu-west-1' }),
    elb: new ElasticLoadBalancingV2Client({ region: 'eu-west-1' }),
    autoscaling: new ApplicationAutoScalingClient({ region: 'eu-west-1' }),
    logs: new CloudWatchLogsClient({ region: 'eu-west-1' }),
    cluster: 'agenthost-services',
    subnets: ['subnet-a', 'subnet-b'],
    securityGroups: ['sg-tasks'],
    executionRoleArn: 'arn:aws:iam::123456789012:role/svc-exec',
    listenerArn: LISTENER,
    vpcId: 'vpc-1',
    domain: 'services.example.com',
    logGroup: 'agenthost-services',
    region: 'eu-west-1',
    image: 'public.ecr.aws/docker/library/node:24-bookworm-slim',
    secretsPrefix: 'agenthost',
    account: '123456789012',
    gatewaySource: GATEWAY,
    launcherSource: LAUNCHER,
    bucket: 'agenthost-bundles',
    presign: bucket.presign,
  });

export const launch: ServiceLaunch = {
  serviceId: SERVICE_ID,
  name: 'web',
  workspaceId: WS,
  bundle: { data: Buffer.alloc(0), format: 'tar.gz' },
  bundleUrl: 'https://bucket.s3.eu-west-1.amazonaws.com/bundles/x.tar.gz?X-Amz-Signature=abc',
  command: null,
  env: { GREETING: 'hi', PLATFORM_SERVICE_ID: SERVICE_ID },
  secretNames: ['APP_TOKEN'],
  secrets: {},
  http: true,
  instances: { min: 2, max: 3 },
};
