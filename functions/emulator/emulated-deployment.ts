import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ECSClient } from '@aws-sdk/client-ecs';
import { S3Client } from '@aws-sdk/client-s3';
import { removeStaleRuns } from '../adapters/local/bwrap/run-dir.ts';
import { BwrapSandbox } from '../adapters/local/bwrap/sandboxes.ts';
import { ADMIN_KEY_FILE, type BootstrapResult, bootstrapOwner } from '../platform/bootstrap.ts';
import type { Config } from '../platform/config.ts';
import { ENV } from '../shared/env-names.ts';
import { ApiGatewayEmulator } from './api-gateway-emulator.ts';
import { TemplateResolver } from './cloudformation-template.ts';
import { dynamoDbEngineFor } from './deployment-dynamodb.ts';
import { DeploymentMeter, type FargateReader } from './deployment-meter.ts';
import { DYNAMODB_LOCAL_CREDENTIALS, freeLoopbackPort } from './dynamodb-local.ts';
import { EcsEmulator } from './ecs-emulator.ts';
import { objectReader } from './ecs-environment-files.ts';
import { type EmulatedEndpoints, removeEndpointsFile, writeEndpointsFile } from './emulated-endpoints.ts';
import { startServiceHosting } from './emulated-service-hosting.ts';
import { emulatedTableDeps } from './emulated-table-deps.ts';
import { fargateReader } from './fargate-meter.ts';
import { LambdaApiEmulator } from './lambda-api-emulator.ts';
import { openCpuShares } from './lambda-cpu-share.ts';
import { LambdaHost } from './lambda-host.ts';
import { MeterEndpoint } from './meter-endpoint.ts';
import { newEmulatorCredentials, type S3Credentials, S3Emulator } from './s3-emulator.ts';
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

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the composition root of the emulated deployment: each stand-in starts in dependency order and registers its closer (service hosting is in emulated-service-hosting.ts)
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

    // The functions' key pair (their role's credentials on Lambda): new at each start, held only by
    // this process and the functions it runs; S3 answers nothing else.
    const credentials = newEmulatorCredentials();
    const s3 = await s3FromTemplates(resolver, join(root, 's3'), credentials, meter);
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
      // Durable functions (the template's DurableConfig) run durable executions (durable-executions.ts).
      durableConfig: (name) => {
        const fn = lambdas?.find(name);
        const seconds = fn?.durableTimeoutSeconds;
        return seconds ? { timeoutSeconds: seconds, retentionDays: fn?.durableRetentionDays } : undefined;
      },
      // What the durable executions used: operations, data written and retained (Lambda's bill).
      durableUsage: (usage) => meter.durableUsage(usage),
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

    // Always-on services (emulated-service-hosting.ts).
    const { elbEndpoint, logsEndpoint, scalingEndpoint, frontPort } = await startServiceHosting({
      resolver,
      account: EMULATED_ACCOUNT,
      root,
      ecs,
      lambdaApi,
      s3Endpoint,
      secretsEndpoint,
      credentials,
      taskStartMs: config.emulatorTaskStartMs,
      closers,
      log,
    });

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
      loopbackPorts: config.emulatorLoopbackPorts,
      durableTimeoutSeconds: config.emulatorDurableTimeoutSeconds,
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
    const boot = await bootstrapEmulatedOwner(config, endpoints);
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

/**
 * The owner account, as `npm start` creates it, in the emulated table; a key made for it is
 * written to the emulated deployment's key file (emulatedAdminKeyFile).
 */
async function bootstrapEmulatedOwner(
  config: Config,
  endpoints: EmulatedEndpoints,
): Promise<BootstrapResult> {
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
  return boot;
}

/** The S3 emulator with the templates' buckets and KMS keys, counting each request on the meter. */
async function s3FromTemplates(
  resolver: TemplateResolver,
  directory: string,
  credentials: S3Credentials,
  meter: DeploymentMeter,
): Promise<S3Emulator> {
  await mkdir(directory, { recursive: true });
  return new S3Emulator({
    directory,
    host: '127.0.0.1',
    port: await freeLoopbackPort(),
    buckets: resolver
      .resourcesOfType('AWS::S3::Bucket')
      .map(({ stack, logicalId }) => resolver.physicalName(stack, logicalId)),
    credentials,
    region: EMULATED_ACCOUNT.region,
    // The templates' KMS keys (the sandbox's run inputs are written under one).
    kmsKeys: resolver
      .resourcesOfType('AWS::KMS::Key')
      .flatMap(({ stack, logicalId }) => [
        String(resolver.resolve(stack, { 'Fn::GetAtt': [logicalId, 'Arn'] }, logicalId)),
        String(resolver.resolve(stack, { Ref: logicalId }, logicalId)),
      ]),
    onRequest: (method, path, query) => meter.s3Request(method, path, query),
  });
}
