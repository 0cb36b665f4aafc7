import { createRequire } from 'node:module';
import { ALERT_SENDER_MODULES } from '../functions/platform/alert-sender.ts';
import { lazyGroup, lazyImportPaths } from '../functions/platform/lazy-modules.ts';
import type { ModuleAccess } from './module-access.ts';

/**
 * How every Lambda handler is bundled. The platform-function construct runs esbuild's API with
 * these options as the asset's local bundling (never Docker), and bench/bundle-sizes.ts runs the
 * same options, so the sizes the bench reports are the sizes that get deployed. Imports neither
 * aws-cdk-lib nor esbuild so both sides can load it.
 */

/** esbuild's target for the Lambda runtime (nodejs24.x, see platform-function.ts). */
export const LAMBDA_ESBUILD_TARGET = 'node24';

/**
 * ESM output needs a real `require` for CommonJS dependencies that `require()` Node built-ins;
 * without it esbuild's shim throws "Dynamic require of ... is not supported".
 */
const REQUIRE_BANNER =
  "import { createRequire as __agenthostCreateRequire } from 'node:module'; const require = __agenthostCreateRequire(import.meta.url);";

/**
 * Left out of every bundle. Each is reached only through a dynamic `import()` that a Lambda never
 * executes (bench/bundle-sizes.ts and test/cdk/handler-bundles.test.ts fail the build if one is ever imported
 * statically, which would break at load):
 * - the SDK's credential providers other than environment variables: Lambda always puts the
 *   role's credentials in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, the first
 *   link of the default chain, so SSO, ini files, credential processes, web identity and the STS
 *   and SSO clients they load (nested-clients) are dead weight (about 90 KB minified);
 * - the local adapters (SQLite store, file-key vault, file bundle store…) and the local wiring of
 *   services to core's supervisor, which the composition root loads only in PLATFORM_MODE=local
 *   (LAZY_MODULES.local); this also keeps `node:sqlite` out of the cold start.
 *
 * Our own modules in these lists are the import paths of functions/platform/lazy-modules.ts's
 * loaders, read from them (lazyImportPaths): the one place the composition roots import them.
 */
const ALWAYS_EXTERNAL = [
  '@aws-sdk/credential-provider-ini',
  '@aws-sdk/credential-provider-login',
  '@aws-sdk/credential-provider-process',
  '@aws-sdk/credential-provider-sso',
  '@aws-sdk/credential-provider-web-identity',
  '@aws-sdk/nested-clients',
  '@aws-sdk/token-providers',
  ...lazyImportPaths(lazyGroup('local')),
];

/**
 * Left out of modules that MODULE_ACCESS gives no Secrets Manager access: aws-deps.ts builds the AWS
 * vault lazily and imports the client and adapter only on a module's first vault call, which
 * such a module never makes (it would be refused by IAM anyway).
 */
const VAULT_EXTERNAL = lazyImportPaths(lazyGroup('vault'));

/** The Secrets Manager client: for the vault, and for the stack's own secrets (secret-json.ts). */
const SECRETS_CLIENT_EXTERNAL = ['@aws-sdk/client-secrets-manager'];

/**
 * Left out of modules that read none of the stack's own secrets (Stripe's keys, the provider
 * keys): the adapter that reads them (deps.ts imports it on first use).
 */
const SECRET_JSON_EXTERNAL = lazyImportPaths(lazyGroup('secretJson'));

/**
 * Left out of modules without read-write bundle access: aws-deps.ts builds the S3 bundle store
 * lazily for puts and deletes, and signs download URLs and reads objects (a presigned GET) without
 * it (functions/adapters/aws/s3-presign.ts), so a module that only reads or signs (the public
 * directory, the schedules module reading a run's large output) never loads the S3 client.
 */
const BUNDLES_EXTERNAL = [
  '@aws-sdk/client-s3',
  '@aws-sdk/s3-request-presigner',
  ...lazyImportPaths(lazyGroup('bundles')),
];

/**
 * Left out of modules that never call a model: the Vercel AI SDK, its provider packages (and the
 * full zod they import) and our adapter, reached only through deps.ts's lazy import.
 */
const LLM_EXTERNAL = [
  'ai',
  '@ai-sdk/anthropic',
  '@ai-sdk/openai',
  '@ai-sdk/google',
  '@ai-sdk/provider',
  '@ai-sdk/provider-utils',
  'ollama-ai-provider-v2',
  ...lazyImportPaths(lazyGroup('llm')),
];

/** Left out of modules that never run sandboxes: the ECS sandbox adapter. */
const SANDBOX_EXTERNAL = lazyImportPaths(lazyGroup('sandbox'));

/** Left out of every module but housekeeping: the sweep of the sandbox's run objects. */
const RUN_OBJECTS_EXTERNAL = lazyImportPaths(lazyGroup('runObjects'));

/** The ECS client: for the sandbox and for always-on services. */
const ECS_EXTERNAL = ['@aws-sdk/client-ecs'];

/** Left out of modules that never take payments: Stripe's SDK and its adapter. */
const PAYMENTS_EXTERNAL = ['stripe', ...lazyImportPaths(lazyGroup('payments'))];

/** Left out of modules that never manage always-on services in AWS. */
const SERVICES_EXTERNAL = [
  '@aws-sdk/client-elastic-load-balancing-v2',
  '@aws-sdk/client-application-auto-scaling',
  '@aws-sdk/client-cloudwatch-logs',
  ...lazyImportPaths(lazyGroup('services')),
];

/** Left out of modules that never change EventBridge schedules. */
const SCHEDULER_EXTERNAL = ['@aws-sdk/client-scheduler', ...lazyImportPaths(lazyGroup('scheduler'))];

/** Left out of modules that never queue alerts: the notifier that invokes the alert-delivery Lambda. */
const ALERTS_QUEUE_EXTERNAL = lazyImportPaths(lazyGroup('alertsQueue'));
/** The Lambda client: for queued alerts and for runs handed to the run worker. */
const LAMBDA_CLIENT_EXTERNAL = ['@aws-sdk/client-lambda'];
/**
 * Left out of modules that start no runs: the store's recorder of a run's steps and the run
 * worker's client (docs/runs.md, "Long runs").
 */
const RUNS_EXTERNAL = lazyImportPaths(lazyGroup('runs'));

/** Left out of modules that never send or check alerts: the delivery and URL-check code (platform/alert-sender.ts imports them on first use). */
const ALERTS_SEND_EXTERNAL = lazyImportPaths(ALERT_SENDER_MODULES);

/**
 * Left out of modules that neither run calls nor manage services: the OpenTelemetry SDK, its
 * exporters and the platform's tracer on them (functions/platform/tracer-deps.ts loads them on a
 * call's first span, so the others never do).
 */
const TRACES_EXTERNAL = ['@opentelemetry/*', ...lazyImportPaths(lazyGroup('traces'))];

/** Externals of one module's bundle, from what it may touch. */
function externalsOf(access: ModuleAccess): string[] {
  return [
    ...ALWAYS_EXTERNAL,
    ...(access.secrets === 'none' ? VAULT_EXTERNAL : []),
    // Payments read Stripe's keys, and model calls the provider keys, from Secrets Manager.
    ...(access.secrets === 'none' && !access.payments && !access.llm ? SECRETS_CLIENT_EXTERNAL : []),
    // The ECS sandbox moves run inputs and results through S3, so sandbox modules keep the client.
    ...(access.bundles !== 'read-write' && !access.sandbox ? BUNDLES_EXTERNAL : []),
    ...(access.sandbox ? [] : SANDBOX_EXTERNAL),
    ...(access.runObjects === 'sweep' ? [] : RUN_OBJECTS_EXTERNAL),
    ...(access.sandbox || access.services ? [] : ECS_EXTERNAL),
    ...(access.services ? [] : SERVICES_EXTERNAL),
    ...(access.payments ? [] : PAYMENTS_EXTERNAL),
    ...(access.payments || access.llm ? [] : SECRET_JSON_EXTERNAL),
    ...(access.llm ? [] : LLM_EXTERNAL),
    ...(access.llm || access.services ? [] : TRACES_EXTERNAL),
    ...(access.scheduler ? [] : SCHEDULER_EXTERNAL),
    ...(access.alerts === 'queue' ? [] : ALERTS_QUEUE_EXTERNAL),
    ...(access.alerts === 'queue' || access.runs ? [] : LAMBDA_CLIENT_EXTERNAL),
    ...(access.runs ? [] : RUNS_EXTERNAL),
    ...(access.alerts ? [] : ALERTS_SEND_EXTERNAL),
  ];
}

/**
 * The zod entry points the Vercel AI SDK and its provider packages import, bundled from zod's
 * CommonJS build instead of the ES build the platform's own schemas use. esbuild's code splitting
 * assigns whole files to chunks: a zod file that both the handler and the lazily imported LLM
 * gateway use goes into a chunk the handler loads at start, with every part of it that either
 * side uses. The SDK uses nearly all of zod classic, the platform about a fifth, so sharing the
 * files put 447 KB of zod in the calls handler's cold start, most of it for a chunk that loads
 * only at the first model call. As separate files (CommonJS, resolved as `require()` would), the
 * SDK's zod stays in the LLM chunks and the handler keeps only the zod it uses. The two copies
 * never meet: the gateway hands the SDK JSON Schemas (`jsonSchema()`), never a zod schema.
 * test/cdk/handler-bundles.test.ts fails if zod's ES build is shared with the SDK again (a new subpath the SDK
 * imports would have to be listed here).
 */
const requireResolve = createRequire(import.meta.url).resolve;
export const AI_SDK_ZOD_ALIAS: Record<string, string> = {
  'zod/v4': requireResolve('zod/v4'),
  'zod/v4/core': requireResolve('zod/v4/core'),
  'zod/v4/mini': requireResolve('zod/v4/mini'),
  'zod/v4/locales/en.js': requireResolve('zod/v4/locales/en.cjs'),
};

/** The handler file in every asset: Lambda's `index.handler`. */
export const LAMBDA_HANDLER_FILE = 'index.mjs';

/**
 * esbuild's build options for one handler, written to `outdir` as the Lambda asset: `index.mjs`
 * and its chunks under `chunks/`.
 *
 * Code splitting: each dynamic `import()` of a bundled module (the AI SDK gateway, the ECS
 * sandbox, Stripe…) becomes a chunk loaded when first needed. Without it esbuild inlines those
 * modules and turns everything they share with the eager code (zod among them) into lazily
 * initialized wrappers, and it ran a schema module before zod's classes were initialized: the
 * calls, schedule-runs and schedule-fire Lambdas crashed at load ("e is not a constructor").
 * test/cdk/lambda-assets.test.ts loads every synthesized asset as Lambda would.
 */
export function esbuildBuildOptions(access: ModuleAccess, entry: string, outdir: string) {
  return {
    entryPoints: { index: entry },
    outdir,
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    platform: 'node' as const,
    format: 'esm' as const,
    target: LAMBDA_ESBUILD_TARGET,
    minify: true,
    /**
     * Off: with `--enable-source-maps` Node reads and parses the map when the module loads, a
     * cold-start cost on every container, and the map would be larger than the code. esbuild's
     * output is deterministic, so a position from a logged stack trace can be mapped by bundling
     * the same commit with a source map.
     */
    sourcemap: false,
    /** `module` first: the AWS SDK's ES builds tree-shake, its CommonJS builds do not. */
    mainFields: ['module', 'main'],
    /** In every output file: each chunk is a module of its own. */
    banner: { js: REQUIRE_BANNER },
    /**
     * The AWS SDK itself is bundled rather than taken from the runtime, so the code runs against
     * the SDK version it was tested with (package-lock.json), tree-shaken and minified.
     */
    external: externalsOf(access),
    alias: AI_SDK_ZOD_ALIAS,
  };
}
