/**
 * A session's task from the warm runner pool (docs/sandbox-aws.md, "Warm runners"): the session
 * claims an idle runner of its workspace and agent version (or an unbound one) and hands it the
 * run through the runner's next claim slot, instead of starting a task and waiting the 20 to 60 s
 * Fargate takes. With none free it starts a runner already claimed for this run (the wait counts
 * against the run's deadline, as a task of its own would), which then stays warm for the same pair.
 * Each claim tops the pool up to its floor of unbound runners; at the session's end the runner is
 * released to wait for the pair's next run, or forgotten if its task was stopped.
 */
import { randomUUID } from 'node:crypto';
import { RunTaskCommand } from '@aws-sdk/client-ecs';
import type {
  PoolManifest,
  RunManifest,
  RunnerBinding,
  RunnerClaim,
} from '../../containers/sandbox-protocol.ts';
import { SandboxUnavailableError } from '../../ports/sandbox.ts';
import type { SessionContext, WarmRunners } from './ecs-sandbox-options.ts';
import { WARM_POOL_PREFIX } from './ecs-sandbox-staging.ts';
import { sandboxTaskInput } from './ecs-sandbox-task.ts';
import { CLAIM_MARGIN_MS, type ClaimedRunner, type RunnerRecord } from './warm-runner-pool.ts';

type Put = (key: string, body: Buffer, contentType: string) => Promise<void>;

/** A runner stops waiting for claims this long before its signer's credentials expire. */
const CREDENTIALS_MARGIN_MS = 2 * 60_000;
/** An unbound runner worth starting waits at least this long (its start takes up to a minute). */
const MIN_UNBOUND_LIFE_MS = 5 * 60_000;

/** Where runner `id`'s objects live: its pool manifest, its runner and its claims. */
const poolKey = (runnerId: string, name: string) => `${WARM_POOL_PREFIX}${runnerId}/${name}`;
export const claimKey = (runnerId: string, slot: number) => poolKey(runnerId, `claim-${slot}.json`);

/** A claimed runner, for the session: its task, and what to do with it at the end. */
export interface WarmLease {
  taskArn: string;
  /** The run ended with the runner still up: it waits for the pair's next run. */
  release(): Promise<void>;
  /** Its task was stopped (a deadline, an abort, a failure): the pool forgets it. */
  drop(): Promise<void>;
  /** The pool's refill this claim set off, awaited before the session ends. */
  refilled: Promise<void>;
}

/**
 * Starts a runner task with its pool manifest and records it: unbound and idle, or (`claimFor`)
 * already busy with its first claim slot taken by that pair's run.
 */
async function startRunner(
  ctx: SessionContext,
  warm: WarmRunners,
  put: Put,
  claimFor?: RunnerBinding,
): Promise<ClaimedRunner | undefined> {
  const runnerId = `wr-${randomUUID().replaceAll('-', '')}`;
  const started = Date.now();
  // Its claim slots' URLs stop working when the signing credentials expire (a function role's
  // last about an hour, renewed as they near their end): the runner waits for no claim past that.
  const credentialsEnd = (await ctx.presign.credentialsExpireAt?.()) ?? Number.POSITIVE_INFINITY;
  // A runner started for a run reads its first claim, written at once, whatever is left.
  const expiresAtMs = Math.max(
    Math.min(started + warm.lifetimeMs, credentialsEnd - CREDENTIALS_MARGIN_MS),
    claimFor ? started + 60_000 : 0,
  );
  if (!claimFor && expiresAtMs - started < MIN_UNBOUND_LIFE_MS) return undefined;
  const ttl = Math.max(60, Math.ceil((expiresAtMs - started) / 1000) + 60);
  const runnerKey = poolKey(runnerId, 'runner.cjs');
  await put(runnerKey, Buffer.from(ctx.runnerSource), 'application/javascript');
  const manifest: PoolManifest = {
    v: 3,
    runnerId,
    runner: { url: await ctx.presign('GET', runnerKey, ttl) },
    claims: await Promise.all(
      Array.from({ length: warm.claimSlots }, async (_, i) => ({
        url: await ctx.presign('GET', claimKey(runnerId, i + 1), ttl),
      })),
    ),
    idleMs: warm.idleMs,
    expiresAtMs,
    pollMs: [ctx.pollMs, ctx.maxPollMs],
    scratchDirs: ['/tmp'],
  };
  const manifestKey = poolKey(runnerId, 'pool.json');
  await put(manifestKey, Buffer.from(JSON.stringify(manifest)), 'application/json');
  const out = await ctx.ecs.send(
    new RunTaskCommand(
      sandboxTaskInput(ctx, {
        clientToken: runnerId,
        startedBy: 'agenthost-warm-pool',
        manifestUrl: await ctx.presign('GET', manifestKey, ttl),
        tags: [{ key: 'agenthost:runner-id', value: runnerId }],
      }),
    ),
  );
  const taskArn = out.tasks?.[0]?.taskArn;
  if (!taskArn || (out.failures?.length ?? 0) > 0) {
    const why =
      (out.failures ?? []).map((f) => [f.reason, f.detail].filter(Boolean).join(': ')).join('; ') ||
      'no task and no failure reported';
    if (claimFor) throw new SandboxUnavailableError(`ECS could not start a sandbox runner: ${why}`);
    return undefined;
  }
  const record: RunnerRecord = {
    runnerId,
    taskArn,
    binding: claimFor ? `${claimFor.workspaceId}|${claimFor.agentVersion}` : '',
    status: claimFor ? 'busy' : 'idle',
    nextClaim: claimFor ? 2 : 1,
    claimSlots: warm.claimSlots,
    usableUntil: Math.min(started + warm.idleMs, expiresAtMs) - CLAIM_MARGIN_MS,
    startedAt: started,
  };
  await warm.pool.add(record);
  return { record, slot: 1 };
}

/**
 * Starts the unbound runners the pool lacks to reach its floor (within its ceiling); resolves to
 * how many started. After each claim, and on housekeeping's schedule (EcsSandbox.prepare).
 */
export async function topUpPool(ctx: SessionContext, warm: WarmRunners, put: Put): Promise<number> {
  const missing = await warm.pool.deficit();
  const started = await Promise.allSettled(
    Array.from({ length: missing }, () => startRunner(ctx, warm, put)),
  );
  return started.filter((s) => s.status === 'fulfilled' && s.value !== undefined).length;
}

/**
 * The run's task from the pool: claims a runner for (workspace, agent version), or starts one
 * claimed for it, and writes the run into the claimed slot.
 */
export async function leaseWarmRunner(
  ctx: SessionContext,
  warm: WarmRunners,
  binding: RunnerBinding,
  manifest: RunManifest,
  put: Put,
  poolPut: Put,
): Promise<WarmLease> {
  const claimed =
    (await warm.pool.claim(binding)) ?? ((await startRunner(ctx, warm, poolPut, binding)) as ClaimedRunner);
  const claim: RunnerClaim = { v: 3, binding, run: manifest };
  await put(
    claimKey(claimed.record.runnerId, claimed.slot),
    Buffer.from(JSON.stringify(claim)),
    'application/json',
  );
  const refilled = topUpPool(ctx, warm, poolPut).then(
    () => undefined,
    () => undefined,
  );
  return {
    taskArn: claimed.record.taskArn,
    refilled,
    release: () =>
      warm.pool.release(
        claimed,
        Math.min(Date.now() + warm.idleMs, claimed.record.startedAt + warm.lifetimeMs),
      ),
    drop: () => warm.pool.remove(claimed.record),
  };
}
