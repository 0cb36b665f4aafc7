import type { Logger } from '../shared/logger.ts';
import type { BundleStore } from './bundle-store.ts';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { LlmGateway } from './llm-gateway.ts';
import type { Notifier } from './notifier.ts';
import type { Payments } from './payments.ts';
import type { RunRecorder } from './run-steps.ts';
import type { RunWorker } from './run-worker.ts';
import type { Sandbox } from './sandbox.ts';
import type { Scheduler } from './scheduler.ts';
import type { SecretVault } from './secret-vault.ts';
import type { ServiceRunner } from './service-runner.ts';
import type { Store } from './store.ts';
import type { Tracer } from './tracer.ts';

/**
 * Everything core receives: the ports and the settings. The composition roots
 * (functions/platform/deps.ts, the tests) build it from adapters; core never knows which.
 */
export interface CoreDeps {
  config: Config;
  store: Store;
  vault: SecretVault;
  bundles: BundleStore;
  llm: LlmGateway;
  sandbox: Sandbox;
  scheduler: Scheduler;
  notifier: Notifier;
  serviceRunner: ServiceRunner;
  payments: Payments;
  clock: Clock;
  logger: Logger;
  /** Spans of every call (docs/traces.md); offTracer when tracing is off. */
  tracer: Tracer;
  /**
   * Where runs keep their steps so that another process carries them on (docs/runs.md, "Long
   * runs"): the store, on the local platform. Absent: a run ends with the process that runs it.
   */
  runRecorder?: RunRecorder | undefined;
  /**
   * Where a run is handed over once admitted, to run to its end past the request that started it
   * (ports/run-worker.ts): the run-worker durable function on AWS. Absent: it runs where it started.
   */
  runWorker?: RunWorker | undefined;
}
