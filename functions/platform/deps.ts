import type { BundleStore } from '../ports/bundle-store.ts';
import { type Clock, systemClock } from '../ports/clock.ts';
import type { CoreDeps } from '../ports/core-deps.ts';
import type { LlmGateway } from '../ports/llm-gateway.ts';
import type { Notifier } from '../ports/notifier.ts';
import type { Payments } from '../ports/payments.ts';
import type { Sandbox } from '../ports/sandbox.ts';
import type { Scheduler } from '../ports/scheduler.ts';
import type { Store } from '../ports/store.ts';
import type { Tracer } from '../ports/tracer.ts';
import { createLogger, type Logger } from '../shared/logger.ts';
import {
  buildEcsSandbox,
  createAwsNotifier,
  createAwsStore,
  createAwsVault,
  createEcsServiceRunner,
  createEventBridgeScheduler,
  createLambdaRunWorker,
  createS3Bundles,
  createStripePayments,
  sweepEcsRunObjects,
} from './aws-deps.ts';
import { type Config, withProviderSecret } from './config.ts';
import { LAZY_MODULES } from './lazy-modules.ts';
import { lazyPort } from './lazy-port.ts';
import {
  buildLocalSandbox,
  createFileBundles,
  createLocalNotifier,
  createLocalPayments,
  createLocalServiceHost,
  createLocalStore,
  createLocalVault,
  LocalScheduler,
} from './local-deps.ts';
import { createTracer } from './tracer-deps.ts';
/**
 * The composition root: builds the dependency set from the configuration, picking the local
 * deployment's adapters (local-deps.ts) or the AWS deployment's (aws-deps.ts) by mode, with the
 * ones both share (the model gateway, the sandbox front, payments by kind) here. Adapters load
 * through LAZY_MODULES (lazy-modules.ts), most behind lazyPort (lazy-port.ts).
 */

/** Everything a handler or core function may touch: built once per process from config. */
/** The dependency set the composition root builds (what core receives: ports/core-deps.ts). */
export type Deps = CoreDeps;

export interface DepsOverrides {
  clock?: Clock;
  /** A store built by the caller (the emulator's, on DynamoDB Local with its own client). */
  store?: Store;
  /** A bundle store built by the caller (tests of AWS mode on DynamoDB Local keep bundles in files). */
  bundles?: BundleStore;
  logger?: Logger;
  llm?: LlmGateway;
  sandbox?: Sandbox;
  notifier?: Notifier;
  scheduler?: Scheduler;
  tracer?: Tracer;
}

/**
 * The one dependency factory. Adapters are imported dynamically so a Lambda bundle for AWS mode
 * never evaluates the local adapters' modules at cold start, and vice versa.
 */
export async function createDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const store =
    overrides.store ??
    (config.mode === 'aws'
      ? await createAwsStore(config, clock)
      : await createLocalStore(config, clock, logger));
  try {
    const vault =
      config.mode === 'aws' ? await createAwsVault(config) : await createLocalVault(config, store);
    const bundles =
      overrides.bundles ??
      (config.mode === 'aws' ? await createS3Bundles(config) : await createFileBundles(config, clock));
    const llm = overrides.llm ?? createLlmGateway(config);
    const sandbox = overrides.sandbox ?? createSandbox(config);
    const scheduler =
      overrides.scheduler ??
      (config.mode === 'aws' ? createEventBridgeScheduler(config) : new LocalScheduler());
    const notifier =
      overrides.notifier ??
      (config.mode === 'aws' ? createAwsNotifier(config) : await createLocalNotifier(logger));
    const serviceRunner =
      config.mode === 'aws'
        ? createEcsServiceRunner(config)
        : await createLocalServiceHost(config, sandbox, logger);
    const payments = createPayments(config);
    const tracer = overrides.tracer ?? createTracer(config, logger);
    const deps: Deps = {
      config,
      store,
      vault,
      bundles,
      llm,
      sandbox,
      scheduler,
      notifier,
      serviceRunner,
      payments,
      clock,
      logger,
      tracer,
    };
    if (config.mode === 'aws' && config.runWorkerFunction) {
      // Runs are handed to the run worker, a durable function, once admitted (docs/runs.md, "Long
      // runs"): what their request did before is recorded in the store for it to carry on.
      const { storeRunRecorder } = await LAZY_MODULES.storeRunRecorder();
      deps.runRecorder = storeRunRecorder(deps, { openEntries: false });
      deps.runWorker = createLambdaRunWorker(config, config.runWorkerFunction);
    }
    if (config.mode === 'local') {
      // Runs keep their steps in the store, so that a restarted platform carries them on
      // (docs/runs.md, "Carried on"); on AWS that is the durable engine's.
      const { storeRunRecorder } = await LAZY_MODULES.storeRunRecorder();
      deps.runRecorder = storeRunRecorder(deps);
      // The host reports crashes, readiness and logs to the supervisor, which decides.
      const { bindLocalSupervision } = await LAZY_MODULES.localSupervision();
      bindLocalSupervision(deps);
    }
    return deps;
  } catch (err) {
    await store.close();
    throw err;
  }
}

/** The Vercel AI SDK gateway, built on the first model call: only the calls Lambda ever makes one. */
export function createLlmGateway(config: Config): LlmGateway {
  return lazyPort<LlmGateway>()(
    async () => {
      // In AWS the keys live in Secrets Manager (the stack's provider-keys secret), never in the
      // function's environment: read once per container, on the first model call.
      let llm = config.llm;
      if (config.llmSecretArn) {
        const { readSecretString } = await LAZY_MODULES.secretJson();
        llm = withProviderSecret(llm, await readSecretString(config.llmSecretArn, config.awsRegion));
      }
      const { AiSdkGateway } = await LAZY_MODULES.aiSdkGateway();
      if (config.mode !== 'local') return new AiSdkGateway(llm);
      // Locally both the SDK's fetch and the platform's own prompt calls share one undici pool.
      const { createPooledFetch, createPooledTransport } = await LAZY_MODULES.pooledFetch();
      const send = createPooledTransport();
      return new AiSdkGateway(llm, { fetch: createPooledFetch(send), send });
    },
    ['generate', 'runToolLoop'],
    {},
  );
}

/**
 * Where user code runs, built on the first sandboxed run. Locally: bubblewrap, or plain child
 * processes only when PLATFORM_SANDBOX=unisolated says so; in AWS: ECS Fargate.
 */
export function createSandbox(config: Config): Sandbox {
  const kind = config.sandbox;
  const build = (): Promise<Sandbox> =>
    kind === 'ecs' ? buildEcsSandbox(config) : buildLocalSandbox(config, kind);
  let instance: Promise<Sandbox> | undefined;
  return {
    kind,
    // As the adapter built later says (bwrap/sandboxes.ts): only bubblewrap gives egress its own network.
    ownNetwork: kind === 'bubblewrap',
    egress: kind !== 'ecs',
    openSession: async (spec) => {
      instance ??= build();
      return (await instance).openSession(spec);
    },
    // Only ECS keeps sandboxes ready; elsewhere nothing is built for it.
    prepare: async () => {
      if (kind !== 'ecs') return 0;
      instance ??= build();
      return (await (await instance).prepare?.()) ?? 0;
    },
    // Only ECS keeps runs' objects outside the session (a local session's directory goes with it);
    // the sweep needs the bucket alone, not the sandbox (housekeeping has no sandbox settings).
    sweep: (now) => (kind === 'ecs' ? sweepEcsRunObjects(config, now) : Promise.resolve(0)),
    // Nothing to end if no session was ever opened.
    close: async () => {
      if (instance) await (await instance).close?.();
    },
  };
}

/**
 * Payments, built on first use (only the billing routes take payments): local checkout pages, or
 * Stripe with keys from the environment or, in AWS, from the Secrets Manager secret the stack made.
 */
export function createPayments(config: Config): Payments {
  return config.payments.kind === 'local' ? createLocalPayments(config) : createStripePayments(config);
}
