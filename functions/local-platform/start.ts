import { join } from 'node:path';
import { startScheduleLoop } from '../jobs/local-schedule-loop.ts';
import { ADMIN_KEY_FILE, bootstrapOwner } from '../platform/bootstrap.ts';
import type { Config } from '../platform/config.ts';
import { DashboardAssets } from '../platform/dashboard-assets.ts';
import { lockDataDir } from '../platform/data-dir-lock.ts';
import { ownerOnlyDataDir, tightenedLine } from '../platform/data-dir-permissions.ts';
import { createDeps } from '../platform/deps.ts';
import { LocalServer } from './local-server.ts';
import { reservePort } from './port-reservation.ts';

/** `npm start`: the whole platform in one process, until SIGINT or SIGTERM. */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the local platform's composition root: each part starts in dependency order and registers its stop
export async function startLocalPlatform(config: Config): Promise<void> {
  if (config.mode !== 'local') {
    throw new Error(
      'agenthost start runs the local platform; set PLATFORM_MODE=local (AWS deploys with cdk deploy)',
    );
  }
  // First, before the store opens: a second platform on this data dir exits here (data-dir-lock.ts).
  const lock = await lockDataDir(config.dataDir, 'local');
  // Then the port, before the owner account and its key: a port in use stops the start here.
  const port = await reservePort(config.port, config.host).catch((err: unknown) => {
    lock.release();
    throw err;
  });
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const tightened = await ownerOnlyDataDir(config.dataDir);
  if (tightened > 0) out(tightenedLine(config.dataDir, tightened));
  const deps = await createDeps(config);
  const boot = await bootstrapOwner(deps);
  if (boot.created) {
    out(`Created the owner account (org "local", tier ${config.bootstrapTier}).`);
    if (boot.generatedKey) {
      out(`Owner API key (shown once; also written to ${join(config.dataDir, ADMIN_KEY_FILE)}, mode 0600):`);
      out(`  ${boot.generatedKey}`);
    } else {
      out('Owner API key: the value of PLATFORM_BOOTSTRAP_API_KEY.');
    }
  }
  // Request temporaries of a platform process that was killed mid-request.
  const { removeOrphanTempFiles } = await import('../edge/temp-files.ts');
  await removeOrphanTempFiles();
  if (config.sandbox === 'bubblewrap') {
    const { removeStaleRuns } = await import('../adapters/local/bwrap/run-dir.ts');
    const { detectBwrap } = await import('../adapters/local/bwrap/start-up-check.ts');
    const runsDir = join(config.dataDir, 'runs');
    // Run dirs left by a crashed process (its sandboxes died with it: --die-with-parent).
    await removeStaleRuns(runsDir);
    const bwrap = await detectBwrap({ runsDir });
    if (bwrap.available) {
      out(`Sandbox: bubblewrap ${bwrap.version ?? ''}`.trim());
      if (bwrap.egress?.available) {
        out('Sandbox network for services and orchestrators: pasta (their own namespace)');
      } else {
        process.stderr.write(
          [
            '',
            '!!! SANDBOX NETWORK UNAVAILABLE: pasta cannot give sandboxes their own network here.',
            `!!! ${bwrap.egress?.reason ?? 'unknown reason'}`,
            '!!! Always-on services and orchestrator agents will be REFUSED; other agents work.',
            '!!! Install passt (Debian/Ubuntu: apt-get install passt); docs/sandbox.md has the rest.',
            '',
          ].join('\n'),
        );
      }
    } else {
      process.stderr.write(
        [
          '',
          '!!! SANDBOX UNAVAILABLE: bubblewrap (bwrap) cannot run here.',
          `!!! ${bwrap.reason ?? 'unknown reason'}`,
          '!!! Tool and agent types (code runtime, managed loop) will be REFUSED. Prompt agents work.',
          '!!! Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), or, only on a machine',
          '!!! where running user code without isolation is acceptable, set PLATFORM_SANDBOX=unisolated.',
          '',
        ].join('\n'),
      );
    }
  } else if (config.sandbox === 'unisolated') {
    process.stderr.write(
      "\n!!! PLATFORM_SANDBOX=unisolated: user code runs WITHOUT isolation, with this process's rights.\n\n",
    );
  }
  // Housekeeping before the first request, then every minute: paid calls charged but never
  // completed (a crash between charge and answer) are refunded; purged versions' bundles deleted.
  // At start, holding the data dir's lock, no other platform runs here: every run and paid call
  // still in flight was cut off when the last one stopped, and is recorded so now, not after its
  // deadline.
  // Runs the last process left open are carried on first, from their steps (docs/runs.md,
  // "Carried on"): their charges are theirs to settle, not the housekeeping's to refund.
  const { resumeRuns } = await import('../edge/run-resume.ts');
  const carried = await resumeRuns(deps);
  if (carried.resumed.length > 0) out(`Runs: ${carried.resumed.length} carried on`);
  const carriedOn = new Set(carried.resumed.map((r) => r.request_id));
  const { runHousekeeping } = await import('../jobs/housekeeping.ts');
  const reconcile = (afterRestart = false) =>
    runHousekeeping(deps, afterRestart ? { afterRestart, carriedOn } : {}).catch((err) =>
      deps.logger.error('housekeeping failed', { error: String(err) }),
    );
  await reconcile(true);
  const reconcileTimer = setInterval(() => void reconcile(), 60_000);
  reconcileTimer.unref();
  const dashboard = DashboardAssets.load();
  const server = new LocalServer(deps, { dashboard });
  const url = await server.listen(port);
  lock.listening(url);
  out(`agenthost listening on ${url} (data in ${config.dataDir})`);
  out(
    dashboard
      ? `Dashboard: ${url}/`
      : 'Dashboard: not built (npm run build:web builds it; npm install does too), serving the API only',
  );
  // Cron schedules: an in-process loop over the stored records; slots missed while stopped are
  // recorded as missed (docs/schedules.md).
  const loop = startScheduleLoop(deps);
  out('Scheduler: in-process loop started');
  // Always-on services that were running when the platform stopped start again.
  const { resumeServices } = await import('../core/services/service-launch.ts');
  const resumed = await resumeServices(deps);
  if (resumed > 0) out(`Services: ${resumed} resumed`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    out(`Received ${signal}; stopping.`);
    clearInterval(reconcileTimer);
    await server.close();
    await loop.stop();
    await deps.serviceRunner.close();
    await deps.notifier.drain();
    await deps.store.close();
    lock.release();
    out('Stopped.');
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}
