import { processConfig } from '../platform/config.ts';
import { createSandbox } from '../platform/deps.ts';
import type { Sandbox } from '../ports/sandbox.ts';
import { createLogger } from '../shared/logger.ts';

/**
 * The warm runner pool's refill on a schedule (every minute in AWS; docs/sandbox-aws.md, "Warm
 * runners"): tops the pool up to its floor of idle unbound runners, so that a deployment no run has
 * reached for a while still has runners ready when one comes. Each claim tops the pool up too; this
 * covers the quiet times, when the runners a claim started have exited after their idle time.
 *
 * A function of its own, not housekeeping's: whatever starts a runner signs its claim slots' URLs,
 * so its role can read `sandbox-inputs/pool/`, where claims carry a run's manifest and so its
 * secret values. Its role may do only that (read and write under that prefix, start sandbox tasks);
 * it runs no user code and takes no input (the schedule's event is ignored).
 */
let sandbox: Sandbox | undefined;

export async function handler(): Promise<{ started: number }> {
  const config = processConfig();
  sandbox ??= createSandbox(config);
  const started = (await sandbox.prepare?.()) ?? 0;
  if (started > 0) createLogger(config.logLevel).info('warm runners started', { started });
  return { started };
}
