import { dirname, join } from 'node:path';
import { ENV } from '../shared/env-names.ts';
import type { TemplateResolver } from './cloudformation-template.ts';
import type { EmulatedFunction } from './lambda-host.ts';
import type { S3Credentials } from './s3-emulator.ts';

/*
 * The emulated Lambda service's functions, read from the synthesized templates: each one's asset,
 * handler, timeout, memory, architecture and concurrency, and the environment Lambda would give it.
 */

/** A function's name for its log lines: the logical id without CDK's hash (`CallsFunction`). */
function shortName(logicalId: string): string {
  return logicalId.replace(/[0-9A-F]{8}$/, '');
}

/** Every AWS::Lambda::Function of the templates, as the emulated Lambda service runs it. */
export function lambdaFunctions(
  resolver: TemplateResolver,
  assetDir: (s3Key: string) => string,
  options: {
    region: string;
    accountId: string;
    publicUrl: string;
    endpoints: Record<string, string>;
    stripeApiBase: string | undefined;
    /** PLATFORM_SANDBOX_IDLE_MIN_MS given to the emulator, for the functions that run sandboxes. */
    sandboxIdleMinMs: number | undefined;
    /** The emulated ECS's task start (PLATFORM_EMULATOR_TASK_START_MS), for the same functions. */
    sandboxTaskStartMs: number | undefined;
    servicesPort: number | undefined;
    /** PLATFORM_EMULATOR_LOOPBACK_PORTS: a test's receivers, which the sending functions may reach. */
    loopbackPorts: readonly number[];
    /** PLATFORM_EMULATOR_DURABLE_TIMEOUT_SECONDS: the durable functions' invocation timeout, shortened by a test. */
    durableTimeoutSeconds?: number | undefined;
    credentials: S3Credentials;
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
    if (ENV.publicUrl in environment) environment[ENV.publicUrl] = options.publicUrl;
    // Stripe is outside AWS: a Stripe test double's address (STRIPE_API_BASE) reaches the functions
    // that take payments (docs/deploy.md lists what the emulator adds beyond the template).
    if (ENV.stripeSecretArn in environment && options.stripeApiBase) {
      environment[ENV.stripeApiBase] = options.stripeApiBase;
    }
    // A bound warm runner's shortest wait, which a test keeps short (the template's is 60 s unless
    // `-c sandboxIdleMinSeconds` said otherwise at synthesis).
    if (ENV.sandboxPoolMax in environment && options.sandboxIdleMinMs !== undefined) {
      environment[ENV.sandboxIdleMinMs] = String(options.sandboxIdleMinMs);
    }
    // A run that must start a task counts the emulated ECS's start, not Fargate's 20 s.
    if (ENV.sandboxCluster in environment && options.sandboxTaskStartMs !== undefined) {
      environment[ENV.sandboxTaskStartMs] = String(options.sandboxTaskStartMs);
    }
    // Service URLs name the load balancer's loopback front (plain HTTP on its port), not https on 443.
    if (ENV.servicesDomain in environment && options.servicesPort !== undefined) {
      environment[ENV.servicesUrlScheme] = 'http';
      environment[ENV.servicesUrlPort] = String(options.servicesPort);
    }
    // A test's alert and webhook receivers listen on loopback, which AWS's outbound rules refuse:
    // the functions that check and send to users' URLs may reach those ports (outbound-url.ts).
    if (options.loopbackPorts.length > 0 && ENV.mode in environment) {
      environment[ENV.emulatorLoopbackPorts] = options.loopbackPorts.join(',');
    }
    const durableConfig = p.DurableConfig as
      | { ExecutionTimeout?: number; RetentionPeriodInDays?: number }
      | undefined;
    const durableTimeoutSeconds = durableConfig?.ExecutionTimeout;
    const memoryMb = Number(p.MemorySize ?? 128);
    const architecture = (p.Architectures as string[] | undefined)?.[0] === 'arm64' ? 'arm64' : 'x86_64';
    const runtime = String(p.Runtime ?? 'nodejs');
    return {
      name,
      arn: `arn:aws:lambda:${options.region}:${options.accountId}:function:${name}`,
      assetDir: dir,
      handler: String(p.Handler ?? 'index.handler'),
      timeoutSeconds:
        durableTimeoutSeconds !== undefined && options.durableTimeoutSeconds !== undefined
          ? options.durableTimeoutSeconds
          : Number(p.Timeout ?? 3),
      memoryMb,
      architecture,
      maxInstances:
        p.ReservedConcurrentExecutions !== undefined ? Number(p.ReservedConcurrentExecutions) : 16,
      durableTimeoutSeconds,
      durableRetentionDays: durableConfig?.RetentionPeriodInDays,
      logName: shortName(logicalId),
      environment: {
        // What Lambda's runtime puts in every function's environment.
        PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
        TZ: ':UTC',
        LANG: 'en_US.UTF-8',
        LAMBDA_TASK_ROOT: dir,
        [ENV.awsRegion]: options.region,
        AWS_DEFAULT_REGION: options.region,
        AWS_EXECUTION_ENV: `AWS_Lambda_${runtime}`,
        AWS_LAMBDA_FUNCTION_NAME: name,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        // The role's credentials on Lambda; here the deployment's key pair.
        AWS_ACCESS_KEY_ID: options.credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: options.credentials.secretAccessKey,
        ...options.endpoints,
        ...environment,
      },
    };
  });
}
