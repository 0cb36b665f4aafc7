import { resolve } from 'node:path';
import * as z from 'zod';
import { ENV, type Setting } from '../shared/env-names.ts';
import { sandboxSettings } from './sandbox-settings.ts';
import { arn, csv, int, portList, text, url } from './setting-types.ts';
import { TIERS } from './tiers.ts';
import { traceSettings } from './trace-settings.ts';

/**
 * The platform's settings as core and the adapters read them, and the one schema that defines
 * them: each setting is declared once below (keyed as in shared/env-names.ts, which names its
 * environment variable), and `Config` is the type the schema produces. functions/platform/config.ts
 * (the only reader of the environment) parses the environment with it; core receives the result in
 * CoreDeps.
 */

export { TIERS, type Tier } from './tiers.ts';

const port = int(0, 65535);

/** Every setting's schema, keyed by the setting (its variable is ENV[setting]). */
const settings = {
  mode: z.enum(['local', 'aws']).default('local'),
  host: z.string().min(1).default('127.0.0.1'),
  port: port.default(8787),
  dataDir: z
    .string()
    .min(1)
    .default('./.data')
    .transform((v) => resolve(v)),
  bootstrapTier: z.enum(TIERS).default('pro'),
  bootstrapApiKey: z
    .string()
    .min(20, 'must be at least 20 characters')
    .max(200)
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
    // ahr_ marks run credentials (core/api-keys/api-key-secret.ts RUN_KEY_PREFIX), which no
    // route but the call route accepts: such a bootstrap key could never authenticate.
    .refine((v) => !v.startsWith('ahr_'), 'must not start with ahr_ (the prefix of run credentials)')
    .optional(),
  tableName: z.string().min(3).max(255).optional(),
  // npm run start:emulated: where the synthesized cloud assembly is kept (and reused while the
  // sources are unchanged); default <data dir>/aws/cdk.out.
  emulatorAssemblyDir: z
    .string()
    .min(1)
    .optional()
    .transform((v) => (v ? resolve(v) : undefined)),
  // npm run start:emulated: how long an emulated ECS task takes to start, RunTask and service tasks
  // alike, as Fargate's 20 to 60 s do on AWS (docs/deploy.md, "Timing"); 0 starts them at once.
  emulatorTaskStartMs: int(0, 600_000).default(0),
  // npm run start:emulated: `share` runs each Lambda instance in a CPU cgroup holding the share of a
  // vCPU Lambda gives its memory (emulator/lambda-cpu-share.ts; needs root); `all` lets it use this
  // machine's cores, as the test suite does (docs/deploy.md, "The emulator's timing").
  emulatorLambdaCpu: z.enum(['share', 'all']).default('all'),
  // npm run start:emulated: the emulated account's Fargate vCPU quotas, on-demand and Spot apart as
  // AWS counts them; RunTask past one is refused as ECS refuses it (docs/deploy.md). 6 is a new
  // account's; Spot's is on-demand's unless set.
  emulatorFargateVcpuQuota: int(0, 1_000_000).default(6),
  emulatorFargateSpotVcpuQuota: int(0, 1_000_000).optional(),
  // npm run start:emulated: loopback ports where a test's receivers of alerts and run webhooks
  // listen. The emulated functions may send to them, over http, though AWS's outbound rules refuse
  // loopback (docs/deploy.md). No synthesized function carries it (test/cdk), so a real deployment
  // keeps those rules whole.
  emulatorLoopbackPorts: portList(),
  // npm run start:emulated: the invocation timeout of the durable functions (the run worker's 900 s),
  // shortened by a test so that a run outlives the invocation that first ran it (docs/deploy.md).
  emulatorDurableTimeoutSeconds: int(1, 900).optional(),
  // npm run start:emulated: a DynamoDB Local already running (http://127.0.0.1:8000) to keep the
  // deployment's table on, instead of starting one of its own; the table is named for the data dir,
  // so several emulated deployments share one engine (docs/deploy.md).
  emulatorDynamodbEndpoint: url(),
  dynamodbEndpoint: url(),
  awsRegion: text(),
  maxBodyBytes: int(1024, 10 * 1024 * 1024).default(1024 * 1024),
  logLevel: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  publicUrl: url(),
  // Browser origins allowed to call the API (CORS), e.g. https://app.example.com; none by default
  // (docs/http.md). `*` allows every origin.
  corsOrigins: z
    .string()
    .optional()
    .transform((v) => csv(v))
    .pipe(
      z.array(
        z.union([
          z.literal('*'),
          z
            .string()
            .regex(/^https?:\/\/[^/\s]+$/, 'must be an origin such as https://app.example.com (no path)'),
        ]),
      ),
    ),
  // Host names besides the platform's own (loopback, HOST, the public URL's, any IP address) under
  // which POST /mcp answers: its DNS-rebinding protection (docs/mcp.md). `*` allows any name.
  allowedHosts: z
    .string()
    .optional()
    .transform((v) => csv(v).map((h) => h.toLowerCase()))
    .pipe(
      z.array(
        z.union([
          z.literal('*'),
          z
            .string()
            .regex(
              /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/,
              'must be host names such as api.example.com (no scheme, port or path), or *',
            ),
        ]),
      ),
    ),
  // Requests a minute from one client address to the routes without an API key, and to any route
  // when the request carries no valid key (docs/http.md).
  addressRateLimit: int(1, 1_000_000).default(1200),
  // Each account's request rate by its tier (docs/http.md, "Request rate"); `off` only for a
  // platform with one tenant, or to measure the rate against none (bench:read-rate).
  requestRate: z.enum(['on', 'off']).default('on'),
  // The local server's edge (docs/http.md "Slow and many connections"): connections one client
  // address may hold open at once; the most a request's headers, and the whole request with its
  // body, may take to arrive.
  maxConnectionsPerAddress: int(1, 1_000_000).default(256),
  headersTimeoutMs: int(100, 600_000).default(10_000),
  requestTimeoutMs: int(100, 3_600_000).default(30_000),
  // How long a connection refused before its body was read stays open after its answer, so the
  // client reads the answer before the close (functions/local-platform/lingering-close.ts).
  lingerMs: int(100, 60_000).default(5_000),
  // Answers a client does not read (docs/http.md "Answers a client does not read"): a connection
  // that takes nothing of its answer for this long is closed; bytes of answers waiting for their
  // readers, per client address and in all, past which large answers are refused (429). Each
  // bound holds the largest answer (a 6 MB page) with room to spare.
  writeTimeoutMs: int(100, 600_000).default(30_000),
  maxUnreadBytesPerAddress: int(8 * 1024 * 1024, 2 ** 40).default(32 * 1024 * 1024),
  maxUnreadBytes: int(8 * 1024 * 1024, 2 ** 40).default(128 * 1024 * 1024),
  /** The most a call may run (below API Gateway's integration timeout in AWS). */
  maxCallSeconds: int(1, 300).default(300),
  // A streamed call's cap (docs/calls.md, "Streamed calls"): in AWS its integration streams, so it is
  // not held to API Gateway's buffered limit; set by the stack on the calls function.
  maxStreamedCallSeconds: int(1, 300).default(300),
  // A run's cap (a call started with Prefer: respond-async, or an MCP task; docs/runs.md): the
  // deployment's bound over the agent's run_timeout_seconds and the caller's tier.
  maxRunSeconds: int(1, 3600).default(3600),
  ...traceSettings,
  ...sandboxSettings,
  secretsPrefix: z
    .string()
    .regex(
      /^[A-Za-z0-9_+=.@-]+(?:\/[A-Za-z0-9_+=.@-]+)*$/,
      'must be a Secrets Manager name prefix such as agenthost/prod',
    )
    .max(200)
    .default('agenthost'),
  secretsKmsKeyId: arn(),
  bundleBucket: z.string().min(3).max(63).optional(),
  // The AWS SDK's own variable for an S3-compatible endpoint (the S3 client reads it itself); read
  // here too so the URLs the platform signs without the client name the same endpoint (the
  // emulated deployment's).
  s3Endpoint: url(),
  bundleKmsKeyId: arn(),
  // Schedules. Locally: how many scheduled runs the in-process loop runs at once. In AWS (set by
  // the stack): the EventBridge Scheduler group, the fire Lambda, the role Scheduler assumes to
  // invoke it, the dead-letter queue, and the alert-delivery Lambda.
  schedulerConcurrency: int(1, 10_000).default(1000),
  scheduleGroup: z.string().min(1).max(64).optional(),
  scheduleTargetArn: arn(),
  scheduleRoleArn: arn(),
  scheduleDlqArn: arn(),
  alertsFunction: z.string().min(1).max(256).optional(),
  // Runs (docs/runs.md, "Long runs"; set by the stack): the run-worker durable function, by its
  // alias (a durable function is invoked by a version or an alias), which runs a run to its end.
  runWorkerFunction: z.string().min(1).max(256).optional(),
  // Always-on services (docs/services.md): the first restart backoff (doubling, capped at 30 s),
  // how long an app must stay up for its restart-failure counter to reset, and how long it may
  // take to listen on its port after starting.
  serviceBackoffMs: int(10, 60_000).default(1000),
  serviceHealthyMs: int(100, 3_600_000).default(60_000),
  serviceStartTimeoutMs: int(500, 600_000).default(60_000),
  // AWS services (set by the stack): the cluster, the task network, the execution role, the
  // HTTPS listener and its VPC, the domain of service URLs, the log group, the image, and the
  // task programs bundled into the function's asset (the gateway and the app launcher).
  servicesCluster: text(),
  servicesSubnets: text().transform(csv),
  servicesSecurityGroups: text().transform(csv),
  servicesExecutionRoleArn: text(),
  servicesListenerArn: text(),
  servicesVpcId: text(),
  servicesDomain: z.string().min(1).max(200).optional(),
  servicesLogGroup: text(),
  servicesImage: text(),
  servicesGatewayFile: text(),
  servicesLauncherFile: text(),
  // Where the services' load balancer answers, when not at https://<host> (443): the emulated
  // deployment's plain-HTTP loopback front sets http and its port (docs/deploy.md).
  servicesUrlScheme: z.enum(['https', 'http']).default('https'),
  servicesUrlPort: int(1, 65535).optional(),
  // Payments (docs/billing.md): local checkout pages, or Stripe. Stripe's keys come from the
  // environment, or in AWS from the Secrets Manager secret the stack names (JSON with
  // secret_key and webhook_secret). STRIPE_API_BASE points the SDK elsewhere (tests).
  payments: z.enum(['local', 'stripe']).optional(),
  // A paid call's charge still pending this long after its deadline is refunded (docs/billing.md).
  reconcileGraceMs: int(0, 3_600_000).default(60_000),
  stripeSecretKey: text(),
  stripeWebhookSecret: text(),
  stripeApiBase: url(),
  stripeSecretArn: text(),
  // LLM providers, under the vendors' usual names. In AWS the stack keeps them in one Secrets
  // Manager secret (JSON with the same names) and gives the run functions its ARN instead.
  llmSecretArn: text(),
  anthropicApiKey: text(),
  anthropicBaseUrl: url(),
  openaiApiKey: text(),
  openaiBaseUrl: url(),
  googleApiKey: text(),
  googleBaseUrl: url(),
  ollamaBaseUrl: url(),
  // Platform default model per provider (the last step of model resolution).
  anthropicDefaultModel: text(),
  openaiDefaultModel: text(),
  googleDefaultModel: text(),
  ollamaDefaultModel: text(),
} satisfies Record<Setting, z.ZodType>;

/** The settings the provider-keys secret may hold (docs/deploy.md). */
export const PROVIDER_SECRET_SETTINGS = [
  'anthropicApiKey',
  'anthropicBaseUrl',
  'openaiApiKey',
  'openaiBaseUrl',
  'googleApiKey',
  'googleBaseUrl',
  'ollamaBaseUrl',
] as const;
type ProviderSecretSetting = (typeof PROVIDER_SECRET_SETTINGS)[number];

/**
 * The provider-keys secret: a JSON object under the environment's names of these settings, with
 * their rules, and nothing else.
 */
export const providerSecretSchema = z.strictObject(
  Object.fromEntries(PROVIDER_SECRET_SETTINGS.map((k) => [ENV[k], settings[k]])) as {
    [K in ProviderSecretSetting as (typeof ENV)[K]]: (typeof settings)[K];
  },
);

/**
 * What each deployment needs before anything starts. `required`: settings it cannot run without.
 * `together`: settings the stack sets together when it grants a function a capability (the ECS
 * sandbox, schedule targets, always-on services): a function without the capability has none of
 * them and starts; one that has any of them needs them all, and what they rely on (`needs`).
 */
export const DEPLOYMENT_SETTINGS = {
  local: { required: [], together: {} },
  aws: {
    required: ['tableName'],
    together: {
      sandbox: {
        all: [
          'sandboxCluster',
          'sandboxTaskDefinition',
          'sandboxSubnets',
          'sandboxSecurityGroups',
          'sandboxRunnerFile',
          'sandboxInputsKey',
        ],
        needs: ['bundleBucket', 'awsRegion'],
      },
      scheduleTargets: {
        all: ['scheduleTargetArn', 'scheduleRoleArn', 'scheduleDlqArn'],
        needs: ['scheduleGroup'],
      },
      services: {
        all: [
          'servicesCluster',
          'servicesSubnets',
          'servicesSecurityGroups',
          'servicesExecutionRoleArn',
          'servicesListenerArn',
          'servicesVpcId',
          'servicesDomain',
          'servicesLogGroup',
          'servicesImage',
          'servicesGatewayFile',
          'servicesLauncherFile',
        ],
        needs: ['bundleBucket', 'awsRegion'],
      },
    },
  },
} as const satisfies Record<
  'local' | 'aws',
  {
    required: readonly Setting[];
    together: Record<string, { all: readonly Setting[]; needs: readonly (Setting & keyof Config)[] }>;
  }
>;

/** Whether a parsed setting has a value (an empty list, from an unset variable, has none). */
const isSet = (v: unknown) => (Array.isArray(v) ? v.length > 0 : v !== undefined);

/** The configuration schema: the environment's settings (keyed as ENV), checked and shaped into a Config. */
export const configSchema = z
  .object(settings)
  .superRefine((s, ctx) => {
    const missing = (setting: Setting, message: string) =>
      ctx.addIssue({ code: 'custom', path: [setting], message });
    if (s.port !== 0 && s.sandboxHostPorts.includes(s.port)) {
      missing(
        'sandboxHostPorts',
        `must not include the platform's own port (${s.port}): services are kept off it (docs/sandbox.md)`,
      );
    }
    const deployment: {
      required: readonly Setting[];
      together: Record<string, { all: readonly Setting[]; needs: readonly Setting[] }>;
    } = DEPLOYMENT_SETTINGS[s.mode];
    for (const r of deployment.required) {
      if (!isSet(s[r])) missing(r, `is required when ${ENV.mode}=${s.mode}`);
    }
    for (const { all, needs } of Object.values(deployment.together)) {
      const given = all.find((k) => isSet(s[k]));
      if (!given) continue;
      for (const k of [...all, ...needs]) {
        if (!isSet(s[k])) missing(k, `is required when ${ENV[given]} is set`);
      }
    }
  })
  .transform(shape);

/**
 * Settings grouped in Config under a prefix of their key: `services.vpcId` is servicesVpcId,
 * `llm.openai.baseUrl` openaiBaseUrl; Stripe's keep their names under `payments`.
 */
const GROUPED = /^(services|stripe|anthropic|openai|google|ollama)(.)(.*)$/;
const PROVIDERS = ['anthropic', 'openai', 'google', 'ollama'] as const;

/** The parsed settings, flat (as keyed in ENV). */
type Flat = z.output<z.ZodObject<typeof settings>>;
/** The settings under `prefix`, keyed by the rest of their key. */
type Prefixed<P extends string> = {
  [K in keyof Flat as K extends `${P}${infer R}` ? Uncapitalize<R> : never]: Flat[K];
};
type Ungrouped = {
  [K in keyof Flat as K extends `${(typeof PROVIDERS)[number] | 'services' | 'stripe' | 'sandbox' | 'payments'}`
    ? never
    : K extends `${(typeof PROVIDERS)[number] | 'services' | 'stripe'}${string}`
      ? never
      : K]: Flat[K];
};

/** T with every key present: an optional setting is `undefined` when unset, never absent from the type. */
type Complete<T> = {
  [K in keyof Required<T>]: Pick<T, K> extends Required<Pick<T, K>> ? T[K] : T[K] | undefined;
};

export type LlmProviderConfig = Complete<Prefixed<'anthropic'>>;

/** The platform's settings, as the schema produces them. */
export type Config = Complete<Ungrouped> & {
  sandbox: NonNullable<Flat['sandbox']>;
  payments: { kind: NonNullable<Flat['payments']> } & Complete<Pick<Flat, keyof Flat & `stripe${string}`>>;
  services: Complete<Prefixed<'services'>>;
  llm: Record<(typeof PROVIDERS)[number], LlmProviderConfig>;
};

/** The flat settings in Config's shape: the groups nested, the defaults that depend on the mode filled in. */
function shape(s: Flat): Config {
  const c: Record<string, unknown> = {};
  const groups: Record<string, Record<string, unknown>> = { services: {}, stripe: {} };
  for (const p of PROVIDERS) groups[p] = { apiKey: undefined };
  for (const k of Object.keys(settings) as Setting[]) {
    const m = GROUPED.exec(k);
    if (!m) c[k] = s[k];
    else
      (groups[m[1] as string] as Record<string, unknown>)[
        m[1] === 'stripe' ? k : (m[2] as string).toLowerCase() + m[3]
      ] = s[k];
  }
  const aws = s.mode === 'aws';
  c.sandbox = s.sandbox ?? (aws ? 'ecs' : 'bubblewrap');
  c.payments = { kind: s.payments ?? (aws ? 'stripe' : 'local'), ...groups.stripe };
  c.services = groups.services;
  c.llm = Object.fromEntries(PROVIDERS.map((p) => [p, groups[p]]));
  return c as Config;
}
