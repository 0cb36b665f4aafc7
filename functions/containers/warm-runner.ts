import { resetRunner } from './runner-reset.ts';
import type { PoolManifest, RunManifest, RunnerBinding, RunnerClaim } from './sandbox-protocol.ts';

/**
 * A warm runner (docs/sandbox-aws.md, "Warm runners"): a sandbox task started before any run needs
 * it, so that a run claims a task already up instead of waiting the 20 to 60 s a Fargate task
 * takes to start. It waits for its claims in turn (PoolManifest), serves each run exactly as a
 * task started for that run would (`serve`, sandbox-runner.ts), and resets between runs. The first
 * claim binds it to one workspace and agent version; a claim for any other pair is refused (its
 * run is told so through its first result) and the runner exits, whatever the platform's records
 * say. It exits when no claim comes within idleMs, at expiresAtMs, or after its last claim slot.
 */

export interface RunnerSteps {
  serve(m: RunManifest): Promise<void>;
  nextObject<T>(url: string, until: number, pollMs: [number, number]): Promise<T | null>;
  upload(url: string, body: string): Promise<void>;
  log(msg: string, extra?: Record<string, unknown>): void;
}

const sameBinding = (a: RunnerBinding, b: RunnerBinding) =>
  a.workspaceId === b.workspaceId && a.agentVersion === b.agentVersion;

export async function servePool(p: PoolManifest, steps: RunnerSteps): Promise<void> {
  const runnerId = p.runnerId;
  steps.log('warm runner waiting', { runnerId, slots: p.claims.length });
  let binding: RunnerBinding | undefined;
  // Until the first claim, the pool manifest says how long; after each run, that run's claim (the
  // wait follows its pair's traffic).
  let until = Math.min(p.firstClaimByMs ?? Date.now() + p.idleMs, p.expiresAtMs);
  for (let k = 1; k <= p.claims.length; k++) {
    const slot = p.claims[k - 1] as PoolManifest['claims'][number];
    const claim = await steps.nextObject<RunnerClaim>(slot.url, until, p.claimPollMs ?? p.pollMs);
    if (claim === null) {
      steps.log('idle: no claim came', { runnerId, k });
      return;
    }
    if (binding && !sameBinding(binding, claim.binding)) {
      steps.log('claim for another workspace or agent version refused', { runnerId, k });
      const first = claim.run.execs[0];
      if (first) {
        await steps.upload(
          first.resultUrl,
          JSON.stringify({ v: 1, error: 'this warm runner serves another workspace or agent version' }),
        );
      }
      return;
    }
    binding ??= claim.binding;
    steps.log('claimed', { runnerId, k, runId: claim.run.runId });
    await steps.serve(claim.run);
    resetRunner(claim.run.workDir, p.scratchDirs, steps.log);
    steps.log('reset', { runnerId, k });
    until = Math.min(Date.now() + (claim.idleMs ?? p.idleMs), p.expiresAtMs);
  }
  steps.log('all claim slots used', { runnerId });
}
