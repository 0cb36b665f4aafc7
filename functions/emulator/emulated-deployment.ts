import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ECSClient } from '@aws-sdk/client-ecs';
import { S3Client } from '@aws-sdk/client-s3';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { removeStaleRuns } from '../adapters/local/bwrap/run-dir.ts';
import { BwrapSandbox } from '../adapters/local/bwrap/sandboxes.ts';
import { ADMIN_KEY_FILE, type BootstrapResult, bootstrapOwner } from '../platform/bootstrap.ts';
import type { Config } from '../platform/config.ts';
import { ENV } from '../shared/env-names.ts';
import { ApiGatewayEmulator } from './api-gateway-emulator.ts';
import { ApplicationAutoScalingEmulator } from './application-auto-scaling-emulator.ts';
import { TemplateResolver } from './cloudformation-template.ts';
import { CloudWatchLogsEmulator } from './cloudwatch-logs-emulator.ts';
import { dynamoDbEngineFor } from './deployment-dynamodb.ts';
import { DeploymentMeter, type FargateReader } from './deployment-meter.ts';
import { DYNAMODB_LOCAL_CREDENTIALS, freeLoopbackPort } from './dynamodb-local.ts';
import { EcsEmulator } from './ecs-emulator.ts';
import { objectReader } from './ecs-environment-files.ts';
import { EcsServiceEmulator } from './ecs-service-emulator.ts';
import { Elbv2Emulator } from './elbv2-emulator.ts';
import { type EmulatedEndpoints, removeEndpointsFile, writeEndpointsFile } from './emulated-endpoints.ts';
import { emulatedTableDeps } from './emulated-table-deps.ts';
import { EventPatternRules } from './event-pattern-rules.ts';
import { fargateReader } from './fargate-meter.ts';
import { LambdaApiEmulator } from './lambda-api-emulator.ts';
import { openCpuShares } from './lambda-cpu-share.ts';
import { LambdaHost } from './lambda-host.ts';
import { LoadBalancerFront } from './load-balancer-front.ts';
import { MeterEndpoint } from './meter-endpoint.ts';
import { newEmulatorCredentials, S3Emulator } from './s3-emulator.ts';
import { startScheduledRules } from './scheduled-rules.ts';
import { SchedulerEmulator } from './scheduler-emulator.ts';
import { SecretsManagerEmulator } from './secrets-manager-emulator.ts';
import { standingResources } from './standing-resources.ts';
import { synthesize } from './synthesized-deployment.ts';
import { createTablesFromTemplate } from './table-from-template.ts';
import { lambdaFunctions } from './template-functions.ts';
import { eventInvokeConfigs, seedTemplateSecrets } from './template-seeds.ts';
import { meterDynamoDb, meteredEndpoint } from './wire-metering.ts';

/**
 * The AWS deployment on one machine (`npm run start:emulated`), built from what `cdk synth`
 * produced and nothing else: every Lambda of the templates runs its deployed asset with the
 * environment the template gives it (lambda-host.ts), behind the REST API the template defines
 * (api-gateway-emulator.ts); the table lives in DynamoDB Local, the buckets in an S3 emulator, and
 * the control planes with no local engine answer through stand-ins that speak their wire formats,
 * reached by the functions' unchanged SDK clients through the SDK's endpoint variables
 * (AWS_ENDPOINT_URL_<SERVICE>). docs/deploy.md lists what is not emulated faithfully.
 *
 * Everything it keeps is under <PLATFORM_DATA_DIR>/aws/, so a restart finds its tables, objects,
 * secrets and schedules again.
 */

export const EMULATED_ACCOUNT = { region: 'us-east-1', accountId: '000000000000' };

/**
 * Where the emulated deployment writes its owner's key: beside its other data under
 * <data dir>/aws/, so a data dir that `npm start` uses too keeps that platform's key file.
 */
export const emulatedAdminKeyFile = (dataDir: string) => join(dataDir, 'aws', ADMIN_KEY_FILE);

/**
 * The CDK context of the emulated synthesis: always-on services on, with a domain under
 * `localhost` (RFC 6761: browsers and curl resolve every *.localhost name to loopback) and a
 * placeholder certificate (the emulated load balancer serves plain HTTP; docs/deploy.md).
 */
export const EMULATED_CONTEXT = {
  servicesDomain: 'services.localhost',
  servicesCertificateArn: `arn:aws:acm:${EMULATED_ACCOUNT.region}:${EMULATED_ACCOUNT.accountId}:certificate/00000000-0000-4000-8000-000000000000`,
};

export interface EmulatedDeployment {
  url: string;
  /** The services load balancer's front: service URLs are http://<name>-<ws>.services.localhost:<its port>. */
  servicesUrl: string;
  endpoints: EmulatedEndpoints;
  boot: BootstrapResult;
  lambdas: LambdaHost;
  /** What the deployment used, in AWS's billing units (deployment-meter.ts). */
  meter: DeploymentMeter;
  close(): Promise<void>;
}

export interface EmulatorOptions {
  /** Where function and emulator log lines go (default: standard error). */
  log?: (line: string) => void;
  /** Progress lines for the person starting it (default: standard output). */
  progress?: (line: string) => void;
}

export async function startEmulatedDeployment(
  config: Config,
  options: EmulatorOptions = {},
): Promise<EmulatedDeployment> {
  const progress = options.progress ?? ((line: string) => process.stdout.write(`${line}\n`));
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const root = join(config.dataDir, 'aws');
  await mkdir(root, { recursive: true, mode: 0o700 });
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const c of closers.splice(0).reverse())
      await c().catch((err) => log(`emulator: close failed: ${String(err)}`));
  };
  try {
    // Sandbox task directories a killed emulator left behind (their processes died with it).
    await removeStaleRuns(join(root, 'tasks'));
    const assembly = await synthesize(
      config.emulatorAssemblyDir ?? join(root, 'cdk.out'),
      EMULATED_CONTEXT,
      progress,
    );
    const resolver = new TemplateResolver(assembly.stacks, EMULATED_ACCOUNT);
    const region = EMULATED_ACCOUNT.region;
    // The meter reads S3's bytes and ECS's tasks once they are up.
    let s3ForMeter: S3Emulator | undefined;
    let readFargate: FargateReader | undefined;
    const meter = new DeploymentMeter({
      standing: standingResources(assembly.stacks),
      storedBytes: () => s3ForMeter?.storedBytes() ?? 0,
      fargate: async (from, to) => (readFargate ? readFargate(from, to) : { usage: {}, open: 0 }),
    });

    const engine = await dynamoDbEngineFor(config, root, resolver);
    closers.push(() => engine.close());
    // The functions reach the table through the meter's pass-through (ConsumedCapacity read off it).
    const dynamoEndpoint = await meteredEndpoint(engine.endpoint, meterDynamoDb(meter), closers);
    const dynamo = new DynamoDBClient({
      endpoint: engine.endpoint,
      region,
      credentials: DYNAMODB_LOCAL_CREDENTIALS,
    });
    closers.push(async () => dynamo.destroy());
    const [tableName] = await createTablesFromTemplate(resolver, dynamo);
    if (!tableName) throw new Error('The templates define no DynamoDB table');

    const buckets = resolver
      .resourcesOfType('AWS::S3::Bucket')
      .map(({ stack, logicalId }) => resolver.physicalName(stack, logicalId));
    await mkdir(join(root, 's3'), { recursive: true });
    // The functions' key pair (their role's credentials on Lambda): new at each start, held only by
    // this process and the functions it runs; S3 answers nothing else.
    const credentials = newEmulatorCredentials();
    const s3 = new S3Emulator({
      directory: join(root, 's3'),
      host: '127.0.0.1',
      port: await freeLoopbackPort(),
      buckets,
      credentials,
      region,
      // The templates' KMS keys (the sandbox's run inputs are written under one).
      kmsKeys: resolver
        .resourcesOfType('AWS::KMS::Key')
        .flatMap(({ stack, logicalId }) => [
          String(resolver.resolve(stack, { 'Fn::GetAtt': [logicalId, 'Arn'] }, logicalId)),
          String(resolver.resolve(stack, { Ref: logicalId }, logicalId)),
        ]),
      onRequest: (method, path, query) => meter.s3Request(method, path, query),
    });
    s3ForMeter = s3;
    const s3Endpoint = await s3.listen();
    closers.push(() => s3.close());

    // The API's address is every function's PLATFORM_PUBLIC_URL, so it is bound before they start.
    let lambdas: LambdaHost | undefined;
    const gateway = new ApiGatewayEmulator(
      resolver,
      (arn, event, requestId, stream) => {
        if (!lambdas) throw new Error('The functions are not started yet');
        return lambdas.invoke(arn, event, requestId, stream);
      },
      (line) => log(`[api-gateway] ${line}`),
      (streamed) => meter.apiRequest(streamed),
    );
    const url = await gateway.listen(config.port, config.host);
    closers.push(() => gateway.close());

    // Secrets Manager: the template's secrets (the provider keys, Stripe's) and the workspaces'.
    const secrets = new SecretsManagerEmulator({ dataDir: root, ...EMULATED_ACCOUNT });
    const secretsEndpoint = await secrets.listen(0, '127.0.0.1');
    closers.push(() => secrets.close());
    seedTemplateSecrets(resolver, secrets, config);

    // Lambda's Invoke API, for what functions invoke (alert delivery) and what invokes them
    // asynchronously (Scheduler, EventBridge rules), with each function's EventInvokeConfig.
    const asyncConfigs = eventInvokeConfigs(resolver);
    const lambdaApi = new LambdaApiEmulator({
      invoke: (name, payload) => {
        if (!lambdas) throw new Error('The functions are not started yet');
        return lambdas.invoke(name, payload);
      },
      hasFunction: (name) => lambdas?.find(name) !== undefined,
      asyncConfig: (name) => {
        const fn = lambdas?.find(name);
        return fn ? asyncConfigs.get(fn.name) : undefined;
      },
      ...EMULATED_ACCOUNT,
    });
    const lambdaEndpoint = await lambdaApi.listen(0, '127.0.0.1');
    closers.push(() => lambdaApi.close());

    // EventBridge Scheduler: the stack's schedule group; each due slot is an asynchronous invoke of
    // its target (the schedule-fire function), under the schedule's retry policy.
    const scheduler = new SchedulerEmulator({
      dataDir: root,
      groups: resolver
        .resourcesOfType('AWS::Scheduler::ScheduleGroup')
        .map(({ stack, logicalId }) => resolver.physicalName(stack, logicalId)),
      invokeAsync: (arn, input) => lambdaApi.invokeAsync(arn, JSON.parse(input)),
      ...EMULATED_ACCOUNT,
    });
    const schedulerEndpoint = await scheduler.listen(0, '127.0.0.1');
    closers.push(() => scheduler.close());

    // ECS: a sandbox task runs its task definition's container under bubblewrap, able to reach
    // only the S3 emulator (where its presigned URLs point), as the Fargate task reaches only S3.
    // Its env files are read from the S3 emulator, signed as the execution role's reads are.
    const envFileReader = new S3Client({ endpoint: s3Endpoint, region, credentials, forcePathStyle: true });
    closers.push(async () => envFileReader.destroy());
    const ecs = new EcsEmulator({
      readObject: objectReader(envFileReader),
      resolver,
      sandbox: new BwrapSandbox({ runsDir: join(root, 'tasks'), outbound: false }),
      hostPorts: [Number(new URL(s3Endpoint).port)],
      ...EMULATED_ACCOUNT,
      taskStartMs: config.emulatorTaskStartMs,
      // The account's Fargate vCPU quotas, which the services' tasks count against too (the ledger).
      quotas: {
        onDemandVcpu: config.emulatorFargateVcpuQuota,
        spotVcpu: config.emulatorFargateSpotVcpuQuota ?? config.emulatorFargateVcpuQuota,
      },
      log,
    });
    const ecsEndpoint = await ecs.listen(0, '127.0.0.1');
    closers.push(() => ecs.close());
    const ecsClient = new ECSClient({ endpoint: ecsEndpoint, region, credentials });
    closers.push(async () => ecsClient.destroy());
    readFargate = fargateReader(ecsClient);

    // Always-on services: the load balancer (its API, and its listener as a plain-HTTP loopback
    // front routing by Host), the services' log group, the scaling targets, the task state change
    // rule (to the service-events function), and ECS services whose tasks run their containers
    // in one sandbox each.
    const elb = new Elbv2Emulator(resolver, EMULATED_ACCOUNT);
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
      EMULATED_ACCOUNT,
    );
    const secretsClient = new SecretsManagerClient({ endpoint: secretsEndpoint, region, credentials });
    closers.push(async () => secretsClient.destroy());
    const ecsServices = new EcsServiceEmulator({
      sandbox: new BwrapSandbox({ runsDir: join(root, 'service-tasks') }),
      hostPorts: [Number(new URL(s3Endpoint).port)],
      ...EMULATED_ACCOUNT,
      taskStartMs: config.emulatorTaskStartMs,
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
      ...EMULATED_ACCOUNT,
      applyBounds: (target) => ecsServices.applyBounds(target),
    });
    const scalingEndpoint = await scaling.listen(0, '127.0.0.1');
    closers.push(() => scaling.close());

    const awsEndpoints: Record<string, string> = {
      AWS_ENDPOINT_URL_ECS: ecsEndpoint,
      AWS_ENDPOINT_URL_SCHEDULER: schedulerEndpoint,
      AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
      [ENV.s3Endpoint]: s3Endpoint,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsEndpoint,
      AWS_ENDPOINT_URL_LAMBDA: lambdaEndpoint,
      AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING_V2: elbEndpoint,
      AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING: scalingEndpoint,
      AWS_ENDPOINT_URL_CLOUDWATCH_LOGS: logsEndpoint,
    };
    const functions = lambdaFunctions(resolver, (key) => assembly.assetDir(key), {
      region,
      accountId: EMULATED_ACCOUNT.accountId,
      publicUrl: url,
      endpoints: awsEndpoints,
      stripeApiBase: config.payments.stripeApiBase,
      sandboxIdleMinMs: config.sandboxIdleMinMs,
      sandboxTaskStartMs: config.emulatorTaskStartMs,
      servicesPort: frontPort,
      credentials,
    });
    lambdas = new LambdaHost(
      functions,
      (fn, line) => log(`[${fn}] ${line}`),
      (r) =>
        meter.lambdaInvocation({
          name: r.fn.logName,
          memoryMb: r.fn.memoryMb,
          architecture: r.fn.architecture ?? 'x86_64',
          durationMs: r.durationMs,
          initMs: r.initMs,
          maxMemoryUsedMb: r.maxMemoryUsedMb,
        }),
      config.emulatorLambdaCpu === 'share' ? openCpuShares() : undefined,
    );
    closers.push(() => (lambdas as LambdaHost).close());

    // EventBridge rules on a timetable (housekeeping every 5 minutes).
    const rules = startScheduledRules(resolver, (arn, event) => lambdaApi.invokeAsync(arn, event), log);
    closers.push(async () => rules.stop());

    const endpoints: EmulatedEndpoints = {
      pid: process.pid,
      apiUrl: url,
      region,
      tableName,
      dynamodbEndpoint: engine.endpoint,
      s3Endpoint,
      secretsManagerEndpoint: secretsEndpoint,
      lambdaEndpoint,
      schedulerEndpoint,
      ecsEndpoint,
    };
    // The owner account, as `npm start` creates it, in the emulated table.
    const deps = await emulatedTableDeps(config, endpoints);
    let boot: BootstrapResult;
    try {
      boot = await bootstrapOwner(deps);
    } finally {
      await deps.store.close();
    }
    if (boot.generatedKey) {
      const file = emulatedAdminKeyFile(config.dataDir);
      await writeFile(file, `${boot.generatedKey}\n`, { mode: 0o600 });
      await chmod(file, 0o600);
    }
    // The meter, for the cost bench.
    const meterEndpoint = new MeterEndpoint(meter);
    endpoints.meterEndpoint = await meterEndpoint.listen();
    closers.push(() => meterEndpoint.close());
    await writeEndpointsFile(config.dataDir, endpoints);
    closers.push(() => removeEndpointsFile(config.dataDir, process.pid));

    const servicesUrl = `http://${EMULATED_CONTEXT.servicesDomain}:${frontPort ?? 0}`;
    return { url, servicesUrl, endpoints, boot, lambdas, meter, close };
  } catch (err) {
    await close();
    throw err;
  }
}
