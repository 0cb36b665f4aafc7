/**
 * Run as a separate process (test/adapters/service-network.test.ts): opens an egress session in the runs
 * directory given, starts a long command in it and, once the command runs (pasta attached), exits
 * at once without closing anything, as a platform that dies of an uncaught error would.
 *
 *   node test/helpers/egress-exit.ts <runsDir>
 */
import { BwrapSandbox } from '../../functions/adapters/local/bwrap/sandboxes.ts';
import { DEFAULT_SANDBOX_LIMITS } from '../../functions/ports/sandbox.ts';

const session = await new BwrapSandbox({ runsDir: process.argv[2] as string }).openSession({
  runId: `exit-${process.pid}`,
  workspaceId: 'ws',
  env: {},
  network: 'egress',
  limits: DEFAULT_SANDBOX_LIMITS,
  deadlineMs: Date.now() + 60_000,
});
void session.exec('sleep 30', {
  onSpawn: () => {
    process.stdout.write('running\n');
    process.exit(0);
  },
});
