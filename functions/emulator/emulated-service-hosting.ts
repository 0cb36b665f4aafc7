import { join } from 'node:path';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { BwrapSandbox } from '../adapters/local/bwrap/sandboxes.ts';
import { ApplicationAutoScalingEmulator } from './application-auto-scaling-emulator.ts';
import type { TemplateResolver } from './cloudformation-template.ts';
import { CloudWatchLogsEmulator } from './cloudwatch-logs-emulator.ts';
import { freeLoopbackPort } from './dynamodb-local.ts';
import type { EcsEmulator } from './ecs-emulator.ts';
import { EcsServiceEmulator } from './ecs-service-emulator.ts';
import { Elbv2Emulator } from './elbv2-emulator.ts';
import { EventPatternRules } from './event-pattern-rules.ts';
import type { LambdaApiEmulator } from './lambda-api-emulator.ts';
import { LoadBalancerFront } from './load-balancer-front.ts';
import type { S3Credentials } from './s3-emulator.ts';

/** What the emulated deployment's service hosting needs from the rest of it. */
export interface ServiceHostingParts {
  resolver: TemplateResolver;
  account: { region: string; accountId: string };
  /** Where the service tasks' sandboxes live. */
  root: string;
  ecs: EcsEmulator;
  lambdaApi: LambdaApiEmulator;
  s3Endpoint: string;
  secretsEndpoint: string;
  credentials: S3Credentials;
  taskStartMs: number;
  /** Each stand-in's close, run in reverse order when the deployment closes. */
  closers: (() => Promise<void>)[];
  log: (line: string) => void;
}

/**
 * Always-on services on the emulated deployment: the load balancer (its API, and its listener as a
 * plain-HTTP loopback front routing by Host), the services' log group, the scaling targets, the
 * task state change rule (to the service-events function), and ECS services whose tasks run their
 * containers in one sandbox each. Answers the stand-ins' endpoints and the front's port (none when
 * the templates have no listener).
 */
export async function startServiceHosting(parts: ServiceHostingParts): Promise<{
  elbEndpoint: string;
  logsEndpoint: string;
  scalingEndpoint: string;
  frontPort: number | undefined;
}> {
  const { resolver, account, closers, ecs, lambdaApi, log } = parts;
  const elb = new Elbv2Emulator(resolver, account);
  const elbEndpoint = await elb.listen(0, '127.0.0.1');
  closers.push(() => elb.close());
  const [listenerArn] = elb.listenerArns();
  const front = listenerArn ? new LoadBalancerFront(elb, listenerArn) : undefined;
  const frontPort = front ? await front.listen(0, '127.0.0.1') : undefined;
  if (front) closers.push(() => front.close());
  const cloudWatchLogs = new CloudWatchLogsEmulator(
    resolver
      .resourcesOfType('AWS::Logs::LogGroup')
      .map(({ stack, logicalId }) => resolver.physicalName(stack, logicalId)),
  );
  const logsEndpoint = await cloudWatchLogs.listen(0, '127.0.0.1');
  closers.push(() => cloudWatchLogs.close());
  const taskEvents = new EventPatternRules(
    resolver,
    (arn, event) => lambdaApi.invokeAsync(arn, event),
    log,
    account,
  );
  const secretsClient = new SecretsManagerClient({
    endpoint: parts.secretsEndpoint,
    region: account.region,
    credentials: parts.credentials,
  });
  closers.push(async () => secretsClient.destroy());
  const ecsServices = new EcsServiceEmulator({
    sandbox: new BwrapSandbox({ runsDir: join(parts.root, 'service-tasks') }),
    hostPorts: [Number(new URL(parts.s3Endpoint).port)],
    ...account,
    taskStartMs: parts.taskStartMs,
    ledger: ecs.ledger,
    freePort: freeLoopbackPort,
    secretValue: async (valueFrom) => {
      const out = await secretsClient.send(new GetSecretValueCommand({ SecretId: valueFrom }));
      if (out.SecretString === undefined) throw new Error('the secret has no string value');
      return out.SecretString;
    },
    putLogLine: (group, stream, line) => cloudWatchLogs.putLine(group, stream, line),
    registerTarget: (group, id, port) => elb.registerTarget(group, id, port),
    deregisterTarget: (group, id) => elb.deregisterTarget(group, id),
    taskStateChange: (detail, resources) =>
      taskEvents.put({ source: 'aws.ecs', 'detail-type': 'ECS Task State Change', detail, resources }),
    log,
  });
  ecs.addOperations(ecsServices.operations());
  closers.push(() => ecsServices.close());
  const scaling = new ApplicationAutoScalingEmulator({
    ...account,
    applyBounds: (target) => ecsServices.applyBounds(target),
  });
  const scalingEndpoint = await scaling.listen(0, '127.0.0.1');
  closers.push(() => scaling.close());
  return { elbEndpoint, logsEndpoint, scalingEndpoint, frontPort };
}
