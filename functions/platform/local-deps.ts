import { join } from 'node:path';
import type { BundleStore } from '../ports/bundle-store.ts';
import { type Clock, epochSeconds } from '../ports/clock.ts';
import type { Config } from '../ports/config.ts';
import type { Notifier } from '../ports/notifier.ts';
import type { Payments } from '../ports/payments.ts';
import type { Sandbox } from '../ports/sandbox.ts';
import type { Scheduler } from '../ports/scheduler.ts';
import type { SecretVault } from '../ports/secret-vault.ts';
import type { ServiceRunner } from '../ports/service-runner.ts';
import type { Store } from '../ports/store.ts';
import { ENV } from '../shared/env-names.ts';
import type { Logger } from '../shared/logger.ts';
import { assertMode } from './config.ts';
import { LAZY_MODULES } from './lazy-modules.ts';
import { lazyPort } from './lazy-port.ts';

/**
 * The local deployment's adapters (PLATFORM_MODE=local): the data dir's SQLite store, file-key
 * vault and bundle files, bubblewrap sandboxes, in-process alerts, schedules and services, and
 * local checkout pages. deps.ts picks these or aws-deps.ts's by mode; they load through
 * LAZY_MODULES (the `local` group of LAZY_GROUPS), which no Lambda bundle contains.
 */

export const SQLITE_FILE = 'agenthost.db';
export const VAULT_KEY_FILE = 'vault.key';

export async function createLocalStore(config: Config, clock: Clock, logger?: Logger): Promise<Store> {
  assertMode(config, 'local', 'The SQLite store');
  const { SqliteStore } = await LAZY_MODULES.sqliteStore();
  return new SqliteStore(join(config.dataDir, SQLITE_FILE), {
    nowSeconds: () => epochSeconds(clock),
    log: logger && ((message) => logger.info(message)),
  });
}

export async function createLocalVault(config: Config, store: Store): Promise<SecretVault> {
  assertMode(config, 'local', 'The local vault');
  const { LocalSecretVault } = await LAZY_MODULES.localSecretVault();
  return LocalSecretVault.open(store, join(config.dataDir, VAULT_KEY_FILE));
}

/** Shared links (large outputs) point at the local server, known once it listens, and expire by `clock`. */
export async function createFileBundles(config: Config, clock: Clock): Promise<BundleStore> {
  assertMode(config, 'local', 'The file bundle store');
  const { FileBundleStore } = await LAZY_MODULES.fileBundleStore();
  return new FileBundleStore(config.dataDir, {
    serverUrl: () => config.publicUrl,
    now: () => clock.now().getTime(),
  });
}

/** Bubblewrap, or plain child processes only when PLATFORM_SANDBOX=unisolated says so. */
export async function buildLocalSandbox(config: Config, kind: 'bubblewrap' | 'unisolated'): Promise<Sandbox> {
  assertMode(config, 'local', `${ENV.sandbox}=${kind}`);
  const { BwrapSandbox, UnisolatedSandbox } = await LAZY_MODULES.bwrapSandbox();
  const runsDir = join(config.dataDir, 'runs');
  return kind === 'unisolated' ? new UnisolatedSandbox({ runsDir }) : new BwrapSandbox({ runsDir });
}

/**
 * Locally the in-process loop (jobs/local-schedule-loop.ts) reads the stored records; `sync` and
 * `remove` only wake it so a change takes effect at once.
 */
export class LocalScheduler implements Scheduler {
  readonly kind = 'local' as const;
  readonly ownsNextRun = true;
  onChange: (() => void) | undefined;
  async sync(): Promise<void> {
    this.onChange?.();
  }
  async remove(): Promise<void> {
    this.onChange?.();
  }
}

/** Alerts delivered in this process. */
export async function createLocalNotifier(logger: Logger): Promise<Notifier> {
  const { BackgroundNotifier } = await LAZY_MODULES.backgroundNotifier();
  return new BackgroundNotifier({ mode: 'local' }, (level, message, fields) =>
    logger[level](message, fields),
  );
}

/** Always-on services: a host of supervised sandboxed processes behind gateways. */
export async function createLocalServiceHost(
  config: Config,
  sandbox: Sandbox,
  logger: Logger,
): Promise<ServiceRunner> {
  const { LocalServiceHost } = await LAZY_MODULES.localServiceHost();
  return new LocalServiceHost({
    sandbox,
    host: config.host,
    hostLoopbackPorts: config.sandboxHostPorts,
    healthyMs: config.serviceHealthyMs,
    startTimeoutMs: config.serviceStartTimeoutMs,
    log: (level, message, fields) => logger[level](message, fields),
  });
}

/** Local checkout pages, built on first use (only the billing routes take payments). */
export function createLocalPayments(config: Config): Payments {
  return lazyPort<Payments>()(
    async () => {
      const { LocalPayments } = await LAZY_MODULES.localPayments();
      return new LocalPayments(config.publicUrl ?? `http://${config.host}:${config.port}`);
    },
    ['createCheckout', 'parseWebhook'],
    { kind: 'local', hostsCheckoutPage: true },
  );
}
