/**
 * The modules the composition roots (deps.ts, local-deps.ts, aws-deps.ts) load on first use, and
 * the capability (lib/module-access.ts) that needs each group of them. The roots import them only
 * through these loaders, and lib/lambda-bundling.ts reads each loader's import path to leave a
 * group out of the bundles that cannot need it: one declaration, so the bundler's externals and the lazy imports cannot disagree
 * (esbuild matches a relative external against the path as written in the importing file: here).
 * alert-sender.ts keeps its own table (ALERT_SENDER_MODULES), so that the alert-delivery Lambda,
 * which builds no deps, bundles none of these: every dynamic import() in a bundled file becomes
 * a chunk of the asset, used or not.
 */
export const LAZY_MODULES = {
  sqliteStore: () => import('../adapters/local/sqlite-store.ts'),
  localSecretVault: () => import('../adapters/local/local-secret-vault.ts'),
  fileBundleStore: () => import('../adapters/local/file-bundle-store.ts'),
  bwrapSandbox: () => import('../adapters/local/bwrap/sandboxes.ts'),
  backgroundNotifier: () => import('../adapters/local/background-notifier.ts'),
  localServiceHost: () => import('../adapters/local/local-service-host.ts'),
  localPayments: () => import('../adapters/local/local-payments.ts'),
  /** undici's pooled request API as the model's fetch (adapters/llm/pooled-fetch.ts says why only locally). */
  pooledFetch: () => import('../adapters/llm/pooled-fetch.ts'),
  /** The local wiring of services to core's supervisor. */
  localSupervision: () => import('./local-supervision.ts'),
  /**
   * The store's recorder of runs' steps: what the local platform carries runs on with, and on AWS
   * what a run's starting request records before it hands the run to the run worker.
   */
  storeRunRecorder: () => import('../core/runs/recorded-steps.ts'),
  dynamodbStore: () => import('../adapters/aws/dynamodb-store.ts'),
  s3Presign: () => import('../adapters/aws/s3-presign.ts'),
  secretsManagerVault: () => import('../adapters/aws/secrets-manager-vault.ts'),
  secretJson: () => import('../adapters/aws/secret-json.ts'),
  s3BundleStore: () => import('../adapters/aws/s3-bundle-store.ts'),
  aiSdkGateway: () => import('../adapters/llm/ai-sdk-gateway.ts'),
  ecsSandbox: () => import('../adapters/aws/ecs-sandbox.ts'),
  /** Housekeeping's sweep of the ECS sandbox's run objects: an S3 listing, no sandbox settings. */
  runObjectSweep: () => import('../adapters/aws/run-object-sweep.ts'),
  stripePayments: () => import('../adapters/aws/stripe-payments.ts'),
  ecsServiceRunner: () => import('../adapters/aws/ecs-service-runner.ts'),
  eventBridgeScheduler: () => import('../adapters/aws/eventbridge-scheduler.ts'),
  lambdaNotifier: () => import('../adapters/aws/lambda-notifier.ts'),
  /** The run worker's client: hands runs over (docs/runs.md, "Long runs"). */
  lambdaRunWorker: () => import('../adapters/aws/lambda-run-worker.ts'),
  /** The OpenTelemetry SDK's tracer (docs/traces.md): every function that runs calls. */
  otelTracer: () => import('../adapters/telemetry/otel-tracer.ts'),
  /** The OTLP exporters, only when the operator configured an endpoint. */
  otlpExport: () => import('../adapters/telemetry/otlp-export.ts'),
  /** X-Ray's OTLP endpoint, its requests signed (`-c tracing=xray`). */
  xrayTransport: () => import('../adapters/telemetry/xray-transport.ts'),
} as const;

export type LazyModule = keyof typeof LAZY_MODULES;

/**
 * Which capability needs each module: lib/lambda-bundling.ts leaves a group out of the bundles of
 * functions without it (lib/module-access.ts). Only the bundler reads this (the Lambdas' bundles
 * drop it), which is why the loaders above are one flat table.
 */
export const LAZY_GROUPS = {
  /** The local adapters (and `node:sqlite` with them): never in a Lambda bundle. */
  local: [
    'sqliteStore',
    'localSecretVault',
    'fileBundleStore',
    'bwrapSandbox',
    'backgroundNotifier',
    'localServiceHost',
    'localPayments',
    'pooledFetch',
    'localSupervision',
  ],
  /** In every AWS bundle: the store, and bundle URL signing (no S3 client). */
  aws: ['dynamodbStore', 's3Presign'],
  /** The Secrets Manager vault: modules with Secrets Manager access. */
  vault: ['secretsManagerVault'],
  /** The stack's own secrets (Stripe's keys, the provider keys): modules that pay or call models. */
  secretJson: ['secretJson'],
  /** The S3 bundle store: modules with read-write bundle access, and the sandbox's. */
  bundles: ['s3BundleStore'],
  /** The sweep of the ECS sandbox's run objects: housekeeping (`runObjects: 'sweep'`). */
  runObjects: ['runObjectSweep'],
  /** The Vercel AI SDK gateway: modules that call models. */
  llm: ['aiSdkGateway'],
  /** The ECS sandbox: modules that run user code. */
  sandbox: ['ecsSandbox'],
  /** Stripe: modules that take payments. */
  payments: ['stripePayments'],
  /** ECS services: modules that manage always-on services in AWS. */
  services: ['ecsServiceRunner'],
  /** EventBridge Scheduler: modules that change schedules. */
  scheduler: ['eventBridgeScheduler'],
  /** The alert-delivery Lambda's client: modules that queue alerts. */
  alertsQueue: ['lambdaNotifier'],
  /** Runs handed to the run worker, and the steps recorded before: modules that start runs. */
  runs: ['storeRunRecorder', 'lambdaRunWorker'],
  /** The OpenTelemetry SDK and exporters: modules that run calls or manage services (docs/traces.md). */
  traces: ['otelTracer', 'otlpExport', 'xrayTransport'],
} as const satisfies Record<string, readonly LazyModule[]>;

/** A module in no group would be bundled everywhere unnoticed: this does not compile then. */
type Ungrouped = Exclude<LazyModule, (typeof LAZY_GROUPS)[keyof typeof LAZY_GROUPS][number]>;
const everyModuleGrouped: [Ungrouped] extends [never] ? true : Ungrouped = true;
void everyModuleGrouped;

/** The loaders of a group of LAZY_MODULES, by name. */
export function lazyGroup(group: keyof typeof LAZY_GROUPS): LazyLoaders {
  return Object.fromEntries(LAZY_GROUPS[group].map((name) => [name, LAZY_MODULES[name]]));
}

/** Loaders of lazily imported modules, by name: a group of LAZY_MODULES, or ALERT_SENDER_MODULES. */
export type LazyLoaders = Readonly<Record<string, () => Promise<unknown>>>;

/**
 * The import paths of a table's loaders, as written in their file (what esbuild's `external`
 * matches: the table's file must sit in functions/platform/, where deps.ts did). Read from the
 * loaders themselves, so a loader cannot be added without its path being known.
 */
export function lazyImportPaths(loaders: LazyLoaders): string[] {
  return Object.entries(loaders).map(([name, load]) => {
    const path = /\bimport\(\s*(['"])([^'"]+)\1\s*\)/.exec(String(load))?.[2];
    if (!path) throw new Error(`The loader ${name} is not an import() of a literal path`);
    return path;
  });
}
