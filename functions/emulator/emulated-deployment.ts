import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BwrapSandbox, removeStaleRuns } from '../adapters/local/bwrap-sandbox.ts';
import { ADMIN_KEY_FILE, type BootstrapResult, bootstrapOwner } from '../platform/bootstrap.ts';
import type { Config } from '../platform/config.ts';
import { ApiGatewayEmulator } from './api-gateway-emulator.ts';
import { TemplateResolver } from './cloudformation-template.ts';
import { type DynamoDbEngine, freeLoopbackPort, startDynamoDbEngine } from './dynamodb-local.ts';
import { EcsEmulator } from './ecs-emulator.ts';
import { type EmulatedEndpoints, removeEndpointsFile, writeEndpointsFile } from './emulated-endpoints.ts';
import { emulatedTableDeps } from './emulated-table-deps.ts';
import { LambdaApiEmulator } from './lambda-api-emulator.ts';
import { type EmulatedFunction, LambdaHost } from './lambda-host.ts';
import { S3_EMULATOR_CREDENTIALS, S3Emulator } from './s3-emulator.ts';
import { startScheduledRules } from './scheduled-rules.ts';
import { SchedulerEmulator } from './scheduler-emulator.ts';
import { SecretsManagerEmulator } from './secrets-manager-emulator.ts';
import { synthesize } from './synthesized-deployment.ts';
import { createTablesFromTemplate } from './table-from-template.ts';
import { eventInvokeConfigs, seedTemplateSecrets } from './template-seeds.ts';

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

export interface EmulatedDeployment {
  url: string;
  endpoints: EmulatedEndpoints;
  boot: BootstrapResult;
  lambdas: LambdaHost;
  close(): Promise<void>;
}

export interface EmulatorOptions {
  /** Where function and emulator log lines go (default: standard error). */
  log?: (line: string) => void;
  /** Progress lines for the person starting it (default: standard output). */
  progress?: (line: string) => void;
}

/** A function's name for its log lines: the logical id without CDK's hash (`CallsFunction`). */
function shortName(logicalId: string): string {
  return logicalId.replace(/[0-9A-F]{8}$/, '');
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
    const assembly = await synthesize(config.emulatorAssemblyDir ?? join(root, 'cdk.out'), {}, progress);
    const resolver = new TemplateResolver(assembly.stacks, EMULATED_ACCOUNT);
    const region = EMULATED_ACCOUNT.region;

    // DynamoDB Local keeps its files under aws/dynamodb.
    await mkdir(join(root, 'dynamodb'), { recursive: true });
    const engine: DynamoDbEngine = await startDynamoDbEngine({ dbPath: join(root, 'dynamodb') });
    closers.push(() => engine.close());
    const dynamo = new DynamoDBClient({
      endpoint: engine.endpoint,
      region,
      credentials: S3_EMULATOR_CREDENTIALS,
    });
    closers.push(async () => dynamo.destroy());
    const [tableName] = await createTablesFromTemplate(resolver, dynamo);
    if (!tableName) throw new Error('The templates define no DynamoDB table');

    const buckets = resolver
      .resourcesOfType('AWS::S3::Bucket')
      .map(({ stack, logicalId }) => resolver.physicalName(stack, logicalId));
    await mkdir(join(root, 's3'), { recursive: true });
    const s3 = new S3Emulator({
      directory: join(root, 's3'),
      host: '127.0.0.1',
      port: await freeLoopbackPort(),
      buckets,
    });
    const s3Endpoint = await s3.listen();
    closers.push(() => s3.close());

    // The API's address is every function's PLATFORM_PUBLIC_URL, so it is bound before they start.
    let lambdas: LambdaHost | undefined;
    const gateway = new ApiGatewayEmulator(
      resolver,
      (arn, event, requestId) => {
        if (!lambdas) throw new Error('The functions are not started yet');
        return lambdas.invoke(arn, event, requestId);
      },
      (line) => log(`[api-gateway] ${line}`),
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
    // only the S3 emulator (where its presigned URLs point).
    const ecs = new EcsEmulator({
      resolver,
      sandbox: new BwrapSandbox({ runsDir: join(root, 'tasks') }),
      hostPorts: [Number(new URL(s3Endpoint).port)],
      ...EMULATED_ACCOUNT,
      log,
    });
    const ecsEndpoint = await ecs.listen(0, '127.0.0.1');
    closers.push(() => ecs.close());

    const awsEndpoints: Record<string, string> = {
      AWS_ENDPOINT_URL_ECS: ecsEndpoint,
      AWS_ENDPOINT_URL_SCHEDULER: schedulerEndpoint,
      AWS_ENDPOINT_URL_DYNAMODB: engine.endpoint,
      AWS_ENDPOINT_URL_S3: s3Endpoint,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsEndpoint,
      AWS_ENDPOINT_URL_LAMBDA: lambdaEndpoint,
    };
    const functions = lambdaFunctions(resolver, (key) => assembly.assetDir(key), {
      region,
      publicUrl: url,
      endpoints: awsEndpoints,
      stripeApiBase: config.payments.stripeApiBase,
    });
    lambdas = new LambdaHost(functions, (fn, line) => log(`[${fn}] ${line}`));
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
    await writeEndpointsFile(config.dataDir, endpoints);
    closers.push(() => removeEndpointsFile(config.dataDir, process.pid));

    return { url, endpoints, boot, lambdas, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Every AWS::Lambda::Function of the templates, as the emulated Lambda service runs it. */
function lambdaFunctions(
  resolver: TemplateResolver,
  assetDir: (s3Key: string) => string,
  options: {
    region: string;
    publicUrl: string;
    endpoints: Record<string, string>;
    stripeApiBase: string | undefined;
  },
): EmulatedFunction[] {
  return resolver.resourcesOfType('AWS::Lambda::Function').map(({ stack, logicalId, resource }) => {
    const p = resource.Properties ?? {};
    const name = resolver.physicalName(stack, logicalId);
    const code = p.Code as { S3Key?: unknown };
    const dir = assetDir(String(resolver.resolve(stack, code.S3Key, `${logicalId}.Code.S3Key`)));
    const declared = resolver.resolve(
      stack,
      (p.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {},
      `${logicalId}.Environment`,
    ) as Record<string, unknown>;
    const environment: Record<string, string> = {};
    for (const [k, v] of Object.entries(declared)) {
      const value = String(v);
      // The asset is Lambda's /var/task; here it is the asset's own folder.
      environment[k] = value.startsWith('/var/task/') ? join(dir, value.slice('/var/task/'.length)) : value;
    }
    // The API is reached where the emulator serves it, not at an execute-api host.
    if ('PLATFORM_PUBLIC_URL' in environment) environment.PLATFORM_PUBLIC_URL = options.publicUrl;
    // Stripe is outside AWS: a Stripe test double's address (STRIPE_API_BASE) reaches the functions
    // that take payments, the one setting the emulator adds beyond the template.
    if ('PLATFORM_STRIPE_SECRET_ARN' in environment && options.stripeApiBase) {
      environment.STRIPE_API_BASE = options.stripeApiBase;
    }
    const memoryMb = Number(p.MemorySize ?? 128);
    const runtime = String(p.Runtime ?? 'nodejs');
    return {
      name,
      arn: `arn:aws:lambda:${options.region}:${EMULATED_ACCOUNT.accountId}:function:${name}`,
      assetDir: dir,
      handler: String(p.Handler ?? 'index.handler'),
      timeoutSeconds: Number(p.Timeout ?? 3),
      memoryMb,
      maxInstances:
        p.ReservedConcurrentExecutions !== undefined ? Number(p.ReservedConcurrentExecutions) : 16,
      logName: shortName(logicalId),
      environment: {
        // What Lambda's runtime puts in every function's environment.
        PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
        TZ: ':UTC',
        LANG: 'en_US.UTF-8',
        LAMBDA_TASK_ROOT: dir,
        AWS_REGION: options.region,
        AWS_DEFAULT_REGION: options.region,
        AWS_EXECUTION_ENV: `AWS_Lambda_${runtime}`,
        AWS_LAMBDA_FUNCTION_NAME: name,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        // The role's credentials on Lambda; here the emulators' one key pair.
        AWS_ACCESS_KEY_ID: S3_EMULATOR_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: S3_EMULATOR_CREDENTIALS.secretAccessKey,
        ...options.endpoints,
        ...environment,
      },
    };
  });
}
