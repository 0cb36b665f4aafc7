import { type App, type StackProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { WARM_POOL_SIZE } from '../functions/adapters/aws/ecs-sandbox-options.ts';
import { StatefulStack } from './stateful-stack.ts';
import { StatelessStack } from './stateless-stack.ts';
import { tracingMode } from './tracing.ts';

export interface AgenthostStacks {
  stateful: StatefulStack;
  stateless: StatelessStack;
}

export interface AgenthostAppOptions {
  /** Optional stage (`-c stage=dev`): prefixes the stack names and separates the stages' secrets. */
  stage?: string | undefined;
  /** Passed to both stacks (env, tags, synthesizer). */
  stackProps?: StackProps;
  /**
   * API Gateway's integration timeout for agent calls (`-c callTimeoutSeconds=300`), 1 to 300.
   * 29 is what every account has; up to 300 needs the regional-API quota increase first.
   */
  callTimeoutSeconds?: number | undefined;
  /**
   * Always-on services (`-c servicesDomain=services.example.com -c servicesCertificateArn=arn:…`):
   * the domain of service URLs and an ACM certificate for *.<domain>. Without both, no service
   * hosting is deployed.
   */
  services?: { domain: string; certificateArn: string } | undefined;
  /** Browser origins allowed to call the API (`-c corsOrigins=https://app.example.com,…`; docs/http.md). */
  corsOrigins?: string | undefined;
  /** Host names besides the API's own under which POST /mcp answers (`-c allowedHosts=mcp.example.com`; docs/mcp.md). */
  allowedHosts?: string | undefined;
  /**
   * The sandbox's warm runners (`-c sandboxPoolMin=2 -c sandboxPoolMax=10`; docs/sandbox-aws.md):
   * idle unbound runners kept ready, and the most runners in all. `sandboxPoolMax=0` turns them off.
   */
  sandboxPool?: { min?: number | undefined; max?: number | undefined } | undefined;
  /**
   * Availability zones of the sandbox VPC (`-c sandboxAzs=1`), 1 to 3: each holds three interface
   * endpoints billed by the hour whatever the traffic (docs/sandbox-aws.md, "Cost of this choice").
   * Default 2, or 1 with a stage: a named stage is the cheaper second copy.
   */
  sandboxAzs?: number | undefined;
  /**
   * The unbound warm runners on Fargate Spot (`-c sandboxSpot=off` to keep them on demand;
   * docs/sandbox-aws.md, "Spot"), on-demand when Spot has no capacity or its quota is reached. `on`
   * (the default: an idle runner Spot takes back costs nothing but a restart) or `off`; checked at
   * synthesis.
   */
  sandboxSpot?: string | undefined;
  /**
   * The sandbox VPC's DNS Firewall (`-c sandboxDnsFirewall=off` to leave it out; docs/sandbox-aws.md,
   * "What a sandboxed command can reach"): its tasks resolve only the AWS names they need. `on` (the
   * default) or `off`; checked at synthesis.
   */
  sandboxDnsFirewall?: string | undefined;
  /**
   * The API stage's throttle, for every account together (`-c apiThrottleRps=100
   * -c apiThrottleBurst=200`, the defaults; docs/deploy.md, "Context values"): requests a second in
   * the steady state and in a burst, past which API Gateway answers 429 before any function runs.
   * Whole numbers, the burst at least the rate; checked at synthesis.
   */
  apiThrottle?: { rps?: number | undefined; burst?: number | undefined } | undefined;
  /**
   * An AWS WAF web ACL in front of the API stage (`-c waf=on`; docs/deploy.md, "Context values"):
   * AWS's managed rule groups and a rate-based rule per source address. `off` (the default) or
   * `on`; checked at synthesis.
   */
  waf?: string | undefined;
  /**
   * Reserved concurrency of the functions that run agents (`-c callsConcurrency=N
   * -c mcpConcurrency=N -c scheduleFireConcurrency=N`; docs/deploy.md, "Context values"): each
   * gets at most N instances, held for it, so a flood of calls cannot take the account's Lambda
   * concurrency from every other route, nor the other way round. None by default: a new account's
   * concurrency quota may be too small to reserve any (Lambda keeps 100 unreserved), and an
   * infra team sets them once it knows its quota. Whole numbers from 1 to 10,000.
   */
  reservedConcurrency?:
    | { calls?: number | undefined; mcp?: number | undefined; scheduleFire?: number | undefined }
    | undefined;
  /**
   * A bound warm runner's shortest wait for its pair's next run, seconds (`-c sandboxIdleMinSeconds=60`,
   * the default; 1 to 600; docs/sandbox-aws.md, "How long a bound runner waits").
   */
  sandboxIdleMinSeconds?: number | undefined;
  /**
   * One alarm per function besides the API's 5xx and the lost cron fires (`-c functionAlarms=off`;
   * docs/deploy.md, "What to watch"): `on` by default, `off` by default with a stage, whose copy
   * nobody is paged for and whose twenty-odd alarms would be a tenth of its idle month.
   */
  functionAlarms?: string | undefined;
  /**
   * Where the platform's own spans go besides each call's record (`-c tracing=xray`; docs/deploy.md,
   * "Traces to X-Ray"): `off` (the default) exports none; `xray` sends them to X-Ray's OTLP
   * endpoint from every function. Checked at synthesis: anything else fails it.
   */
  tracing?: string | undefined;
}

const STAGE = /^[a-z][a-z0-9-]{0,19}$/;

/**
 * The warm runner pool's floor and ceiling (WARM_POOL_SIZE unless given); checked at synthesis. A
 * named stage has no floor unless given one: idle runners are most of a second copy's idle month,
 * and its first tool call may wait for a task to start (docs/sandbox-aws.md, "Cost of this choice").
 */
function sandboxPoolSizes(
  given: AgenthostAppOptions['sandboxPool'],
  stage: string | undefined,
): { min: number; max: number } {
  const max = given?.max ?? WARM_POOL_SIZE.max;
  const min = Math.min(given?.min ?? (stage ? 0 : WARM_POOL_SIZE.min), max);
  if (!(Number.isInteger(max) && max >= 0 && max <= 1000)) {
    throw new Error(`sandboxPoolMax must be a whole number from 0 to 1000 (got ${given?.max})`);
  }
  if (!(Number.isInteger(min) && min >= 0 && min <= 100)) {
    throw new Error(`sandboxPoolMin must be a whole number from 0 to 100 (got ${given?.min})`);
  }
  return { min, max };
}

/** The sandbox VPC's zones: as given, else one for a named stage and two for production. */
function sandboxAzCount(given: number | undefined, stage: string | undefined): number {
  const azs = given ?? (stage ? 1 : 2);
  if (!(Number.isInteger(azs) && azs >= 1 && azs <= 3)) {
    throw new Error(`sandboxAzs must be 1, 2 or 3 (got ${given})`);
  }
  return azs;
}

/** A context switch: `on` or `off` (or a boolean from cdk.json), anything else fails the synthesis. */
function onOff(name: string, given: string | boolean | undefined): boolean {
  if (given === undefined || given === false || given === 'off') return false;
  if (given === true || given === 'on') return true;
  throw new Error(`${name} must be on or off (got ${given})`);
}

/** The stage throttle: as given (each 1 to 10,000 a second), else 100 a second with bursts of 200. */
function apiThrottle(given: AgenthostAppOptions['apiThrottle']): { rateLimit: number; burstLimit: number } {
  const rateLimit = given?.rps ?? 100;
  const burstLimit = given?.burst ?? Math.max(200, rateLimit);
  if (!(Number.isInteger(rateLimit) && rateLimit >= 1 && rateLimit <= 10_000)) {
    throw new Error(`apiThrottleRps must be a whole number from 1 to 10000 (got ${given?.rps})`);
  }
  if (!(Number.isInteger(burstLimit) && burstLimit >= rateLimit && burstLimit <= 10_000)) {
    throw new Error(
      `apiThrottleBurst must be a whole number from apiThrottleRps (${rateLimit}) to 10000 (got ${given?.burst})`,
    );
  }
  return { rateLimit, burstLimit };
}

/** The reserved concurrency given, each checked; a function not named reserves none. */
function reservedConcurrency(given: AgenthostAppOptions['reservedConcurrency']): {
  calls?: number;
  mcp?: number;
  scheduleFire?: number;
} {
  const out: { calls?: number; mcp?: number; scheduleFire?: number } = {};
  for (const [name, value] of Object.entries(given ?? {}) as [keyof typeof out, number | undefined][]) {
    if (value === undefined) continue;
    if (!(Number.isInteger(value) && value >= 1 && value <= 10_000)) {
      throw new Error(`${name}Concurrency must be a whole number from 1 to 10000 (got ${value})`);
    }
    out[name] = value;
  }
  return out;
}

function idleMinSeconds(given: number): number {
  if (!(Number.isInteger(given) && given >= 1 && given <= 600)) {
    throw new Error(`sandboxIdleMinSeconds must be a whole number from 1 to 600 (got ${given})`);
  }
  return given;
}

/**
 * Both stacks and the cdk-nag AwsSolutions checks, as bin/cdk-app.ts and the CDK tests build them.
 * Stack names: AgenthostStateful and AgenthostStateless, or <stage>-AgenthostStateful and
 * <stage>-AgenthostStateless.
 */
export function addAgenthostStacks(app: App, options: AgenthostAppOptions = {}): AgenthostStacks {
  const { stage } = options;
  if (stage !== undefined && !STAGE.test(stage)) {
    throw new Error(
      `stage "${stage}" must be lower-case letters, digits and hyphens, at most 20, starting with a letter`,
    );
  }
  const prefix = stage ? `${stage}-` : '';
  const tracing = tracingMode(options.tracing);

  const stateful = new StatefulStack(app, `${prefix}AgenthostStateful`, {
    description: 'agenthost: data (DynamoDB single table, code-bundle bucket), retained on teardown',
    ...options.stackProps,
  });
  const stateless = new StatelessStack(app, `${prefix}AgenthostStateless`, {
    description: 'agenthost: REST API, one Lambda per resource module, and the web dashboard',
    ...options.stackProps,
    shared: stateful.exportNames,
    stageName: stage ?? 'prod',
    secretsPrefix: stage ? `agenthost-${stage}` : 'agenthost',
    ...(options.callTimeoutSeconds !== undefined ? { callTimeoutSeconds: options.callTimeoutSeconds } : {}),
    ...(options.services ? { services: options.services } : {}),
    ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
    ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
    sandboxPool: sandboxPoolSizes(options.sandboxPool, stage),
    sandboxAzs: sandboxAzCount(options.sandboxAzs, stage),
    sandboxSpot: onOff('sandboxSpot', options.sandboxSpot ?? 'on'),
    sandboxDnsFirewall: onOff('sandboxDnsFirewall', options.sandboxDnsFirewall ?? 'on'),
    throttle: apiThrottle(options.apiThrottle),
    waf: onOff('waf', options.waf ?? 'off'),
    reservedConcurrency: reservedConcurrency(options.reservedConcurrency),
    functionAlarms: onOff('functionAlarms', options.functionAlarms ?? (stage ? 'off' : 'on')),
    ...(options.sandboxIdleMinSeconds !== undefined
      ? { sandboxIdleMinSeconds: idleMinSeconds(options.sandboxIdleMinSeconds) }
      : {}),
    tracing,
  });
  // The stacks share values through named exports (Fn.importValue), which CDK does not track.
  stateless.addStackDependency(stateful);

  // cdk-nag 3 is a CDK policy-validation plugin (no longer an Aspect): it runs at synthesis and
  // fails it on any finding, error or warning, that is not acknowledged where it arises. Two packs:
  // AwsSolutions, and Serverless (failure destinations, dead-letter queues, tracing).
  Validations.of(app).addPlugins(
    new AwsSolutionsChecks(app, { verbose: true }),
    new ServerlessChecks(app, { verbose: true }),
  );
  return { stateful, stateless };
}
