/**
 * A session's task from the warm runner pool (docs/sandbox-aws.md, "Warm runners"): the session
 * claims an idle runner of its workspace and agent version (or an unbound one of a size that fits)
 * and hands it the run through the runner's next claim slot, instead of starting a task and waiting
 * the 20 to 60 s Fargate takes. With none free it starts a runner already claimed for this run (the
 * wait counts against the run's deadline, as a task of its own would), which then waits for the
 * pair's next run as long as the pair's traffic makes worth it (runner-idle-wait.ts). Every task,
 * claimed or not, holds one of the pool's slots (its ceiling); past the ceiling or the account's
 * Fargate quota the run waits for a runner within its deadline, making room by stopping idle
 * runners no run of its own can use, then gives up with a SandboxCapacityError (503, Retry-After).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type PoolManifest,
  RUNNER_PROTOCOL,
  type RunManifest,
  type RunnerBinding,
  type RunnerClaim,
} from '../../containers/sandbox-protocol.ts';
import {
  SandboxCapacityError,
  type SandboxCapacityReason,
  SandboxUnavailableError,
} from '../../ports/sandbox.ts';
import { TASK_ENV_FILE, writeTaskEnvFile } from './ecs-sandbox-env-file.ts';
import type { SessionContext, WarmRunners } from './ecs-sandbox-options.ts';
import { WARM_POOL_PREFIX } from './ecs-sandbox-staging.ts';
import { sandboxTaskInput, startSandboxTask, stopSandboxTask, type TaskRefusal } from './ecs-sandbox-task.ts';
import { DEFAULT_RUNNER_SIZE, type FargateSize } from './fargate-size.ts';
import { idleWaitMs } from './runner-idle-wait.ts';
import { bindingKey, CLAIM_MARGIN_MS, type ClaimedRunner, type RunnerRecord } from './warm-runner-pool.ts';

type Put = (key: string, body: Buffer, contentType: string) => Promise<void>;

/** A runner stops waiting for claims this long before its signer's credentials expire. */
const CREDENTIALS_MARGIN_MS = 2 * 60_000;
/** An unbound runner worth starting waits at least this long (its start takes up to a minute). */
const MIN_UNBOUND_LIFE_MS = 5 * 60_000;
/**
 * An idle runner reads its next claim slot at most every 0.5 s (twice a second rather than four
 * times): a sparse tool's runner reads S3 only half as often while it waits (about $0.00005 a
 * minute), for at most a quarter second more on a warm claim.
 */
export const CLAIM_POLL_MS: [number, number] = [250, 500];
/** A run stops waiting for a runner this long before its deadline: it would have no time to run. */
export const CAPACITY_WAIT_MARGIN_MS = 3000;

/**
 * Whether a run with `deadlineMs` may still start a task: it needs the task's start (ctx.taskStartMs)
 * and time to run after it. One that may not answers 503 with Retry-After rather than start a task
 * that could only time out (its caller retries with a deadline of its own).
 */
export function timeToStartTask(ctx: SessionContext, deadlineMs: number): boolean {
  return deadlineMs - Date.now() >= ctx.taskStartMs + CAPACITY_WAIT_MARGIN_MS;
}
/**
 * Retry-After of a run that found no runner: past the ceiling, a run ends or an idle runner is
 * stopped within seconds; past the account's quota, a stopped task frees its vCPUs once ECS has
 * stopped it, and Fargate's capacity comes back at its own pace.
 */
export const CAPACITY_RETRY_AFTER_SECONDS: Record<SandboxCapacityReason, number> = {
  ceiling: 5,
  quota: 15,
  capacity: 30,
  start: 5,
};

type CapacityReason = SandboxCapacityReason;
/**
 * How long a run whose pair has a runner busy with an earlier run waits for it to be released
 * before starting a task of its own: a tool called every second finds its runner still finishing
 * the last call (a warm run is about a second), and a new task would take Fargate's start (20 to
 * 60 s), so that every call of a steady pair would start a task, up to the ceiling, and most would
 * fail (the cost bench's steady tool: docs/performance.md, "AWS cost"). A longer run's caller waits
 * this much more before its task starts.
 */
export const PAIR_RELEASE_WAIT_MS = 2000;
/** How often a run waiting for its pair's runner looks for it (a pool query each time). */
const PAIR_RELEASE_POLL_MS = 200;

/** Where runner `id`'s objects live: its pool manifest, its runner and its claims. */
const poolKey = (runnerId: string, name: string) => `${WARM_POOL_PREFIX}${runnerId}/${name}`;
export const claimKey = (runnerId: string, slot: number) => poolKey(runnerId, `claim-${slot}.json`);

/** A claimed runner, for the session: its task, and what to do with it at the end. */
export interface WarmLease {
  taskArn: string;
  /**
   * The run ended with the runner still up: it waits for the pair's next run, from `endedAtMs`
   * when the runner ended the run by itself at its last command (it began waiting when it uploaded
   * that result, which may be seconds before this session read it), else from now (it reads the
   * stop command just written, later than now). So the record never says the runner waits longer
   * than it does, and a claim made within the record's time finds the runner still polling.
   */
  release(endedAtMs?: number): Promise<void>;
  /** Its task was stopped (a deadline, an abort, a failure): the pool forgets it. */
  drop(): Promise<void>;
  /** The pool's refill this claim set off, awaited before the session ends. */
  refilled: Promise<void>;
}

type Started =
  | { claimed: ClaimedRunner; refused?: undefined }
  | { claimed?: undefined; refused?: 'ceiling' | TaskRefusal };

/**
 * Puts a new runner's code and its pool manifest (the code's URL, its claim slots' URLs, each for
 * `ttl` seconds, and its times); answers the manifest's key.
 */
async function putPoolManifest(
  ctx: SessionContext,
  warm: WarmRunners,
  put: Put,
  runner: { runnerId: string; ttl: number; firstClaimByMs: number; expiresAtMs: number },
): Promise<string> {
  const { runnerId, ttl, firstClaimByMs, expiresAtMs } = runner;
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
    firstClaimByMs,
    expiresAtMs,
    pollMs: [ctx.pollMs, ctx.maxPollMs],
    claimPollMs: CLAIM_POLL_MS,
    scratchDirs: ['/tmp'],
  };
  const manifestKey = poolKey(runnerId, 'pool.json');
  await put(manifestKey, Buffer.from(JSON.stringify(manifest)), 'application/json');
  return manifestKey;
}

/**
 * Starts a runner task with its pool manifest, in a slot of the pool taken first: unbound and
 * idle, or (`claimFor`) already busy with its first claim slot taken by that pair's run. Answers
 * why none started: the ceiling, ECS's refusal, or (nothing) an unbound runner not worth starting.
 */
async function startRunner(
  ctx: SessionContext,
  warm: WarmRunners,
  put: Put,
  start: { claimFor?: RunnerBinding; size: FargateSize; busyUntil?: number },
): Promise<Started> {
  const { claimFor, size } = start;
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
  if (!claimFor && expiresAtMs - started < MIN_UNBOUND_LIFE_MS) return {};
  // An unbound runner waits for its first claim until then, counted from now rather than from its
  // container's start, so that its record knows when it will have exited.
  const firstClaimByMs = Math.min(started + warm.idleMs, expiresAtMs);
  const reserved = await warm.pool.add({
    runnerId,
    taskArn: '',
    binding: claimFor ? `${claimFor.workspaceId}|${claimFor.agentVersion}` : '',
    status: claimFor ? 'busy' : 'starting',
    nextClaim: claimFor ? 2 : 1,
    claimSlots: warm.claimSlots,
    usableUntil: claimFor ? Math.max(start.busyUntil ?? 0, firstClaimByMs) : firstClaimByMs - CLAIM_MARGIN_MS,
    expiresAt: expiresAtMs,
    startedAt: started,
    protocol: RUNNER_PROTOCOL,
    cpu: size.cpu,
    memory: size.memory,
  });
  if (!reserved) return { refused: 'ceiling' };
  try {
    const ttl = Math.max(60, Math.ceil((expiresAtMs - started) / 1000) + 60);
    const manifestKey = await putPoolManifest(ctx, warm, put, { runnerId, ttl, firstClaimByMs, expiresAtMs });
    // The pool manifest's URL reaches every claim the runner will read: RunTask names only the
    // env file that holds it (ecs-sandbox-env-file.ts).
    const envFile = await writeTaskEnvFile(
      ctx,
      put,
      poolKey(runnerId, TASK_ENV_FILE),
      await ctx.presign('GET', manifestKey, ttl),
    );
    const input = (spot: boolean, clientToken: string) =>
      sandboxTaskInput(ctx, {
        clientToken,
        startedBy: 'agenthost-warm-pool',
        envFile,
        size,
        spot,
        tags: [{ key: 'agenthost:runner-id', value: runnerId }],
      });
    // The unbound floor may run on Spot: a run claims it within seconds, and a Spot interruption
    // (two minutes' notice) costs a warm start, not a run. Without Spot capacity or quota, on-demand.
    const spot = ctx.spot && !claimFor;
    let out: Awaited<ReturnType<typeof startSandboxTask>> | undefined;
    if (spot) {
      // Whatever Spot answers short of a task (no capacity, its quota, even a cluster without
      // FARGATE_SPOT), the floor is started on-demand rather than left empty.
      out = await startSandboxTask(ctx, input(true, runnerId)).catch(() => undefined);
    }
    if (!out || out.refused)
      out = await startSandboxTask(ctx, input(false, spot ? `${runnerId}-on-demand` : runnerId));
    if (out.refused) {
      if (out.taskArn)
        await stopSandboxTask(ctx, out.taskArn, 'agenthost: refused start').catch(() => undefined);
      await warm.pool.remove(reserved);
      return { refused: out.refused };
    }
    const record = await warm.pool.started(reserved, out.taskArn, claimFor ? 'busy' : 'idle');
    return { claimed: { record, slot: 1 } };
  } catch (err) {
    await warm.pool.remove(reserved).catch(() => undefined);
    throw err;
  }
}

/**
 * Starts the unbound runners the pool lacks to reach its floor (within its ceiling); resolves to
 * how many started. After each claim, and every minute from the pool's refill (EcsSandbox.prepare).
 */
export async function topUpPool(ctx: SessionContext, warm: WarmRunners, put: Put): Promise<number> {
  const missing = await warm.pool.deficit();
  const started = await Promise.allSettled(
    Array.from({ length: missing }, () => startRunner(ctx, warm, put, { size: DEFAULT_RUNNER_SIZE })),
  );
  return started.filter((s) => s.status === 'fulfilled' && s.value.claimed !== undefined).length;
}

/**
 * A runner for a run of `binding` needing `size`: an idle one it may claim, else one started for
 * it. Past the ceiling or the quota, stops an idle runner no run of this pair can use to make room,
 * or waits for one, until `deadlineMs` leaves no time to run; then a SandboxCapacityError.
 */
async function acquireRunner(
  ctx: SessionContext,
  warm: WarmRunners,
  binding: RunnerBinding,
  size: FargateSize,
  busyUntil: number,
  deadlineMs: number,
  put: Put,
): Promise<ClaimedRunner> {
  const released = await claimReleased(warm, binding, size, busyUntil, deadlineMs);
  if (released) return released;
  // Why the last start was refused: the reason the run gives if it runs out of time waiting, which
  // a slow store can make happen at the time check rather than at a refusal.
  let lastRefusal: CapacityReason | undefined;
  for (;;) {
    const claimed = await warm.pool.claim(binding, size, busyUntil);
    if (claimed) return claimed;
    // Too little time left to start a runner: only one that frees up can still serve this run.
    if (!timeToStartTask(ctx, deadlineMs)) {
      if (deadlineMs - Date.now() < ctx.capacityPollMs + CAPACITY_WAIT_MARGIN_MS) {
        throw capacityError(lastRefusal ?? 'start', warm.pool.ceiling, ctx.taskStartMs);
      }
      await sleep(ctx.capacityPollMs);
      continue;
    }
    const started = await startRunner(ctx, warm, put, { claimFor: binding, size, busyUntil });
    if (started.claimed) return started.claimed;
    const refused = started.refused ?? 'ceiling';
    let reason: CapacityReason = 'ceiling';
    if (refused !== 'ceiling') {
      if (refused.kind === 'other') {
        throw new SandboxUnavailableError(`ECS could not start a sandbox runner: ${refused.why}`);
      }
      reason = refused.kind;
    }
    lastRefusal = reason;
    // Idle runners of other pairs hold slots and vCPUs that this run needs now: the longest idle goes.
    const evicted = reason === 'capacity' ? undefined : await warm.pool.evict(binding, size);
    if (evicted) {
      await stopRunner(ctx, warm, evicted, 'agenthost: room for a run of another agent');
      // Its slot is free at once; its vCPUs once ECS has stopped it (the next try, or a later one).
      if (reason === 'ceiling') continue;
    }
    if (deadlineMs - Date.now() < ctx.capacityPollMs + CAPACITY_WAIT_MARGIN_MS) {
      throw capacityError(reason, warm.pool.ceiling);
    }
    await sleep(ctx.capacityPollMs);
  }
}

/**
 * An idle runner claimed at once, else, when the pair has one busy with an earlier run, that one
 * once released within PAIR_RELEASE_WAIT_MS (and the run's deadline); undefined when neither.
 */
async function claimReleased(
  warm: WarmRunners,
  binding: RunnerBinding,
  size: FargateSize,
  busyUntil: number,
  deadlineMs: number,
): Promise<ClaimedRunner | undefined> {
  const claimed = await warm.pool.claim(binding, size, busyUntil);
  if (claimed) return claimed;
  const key = bindingKey(binding);
  // A pair's runners are all of its agent version's size: any busy one of this protocol will do (one
  // started before a deploy is never claimed: warm-runner-pool.ts).
  const busy = (await warm.pool.list()).some(
    (r) => r.binding === key && r.status === 'busy' && r.protocol === RUNNER_PROTOCOL,
  );
  if (!busy) return undefined;
  const until = Math.min(Date.now() + PAIR_RELEASE_WAIT_MS, deadlineMs - CAPACITY_WAIT_MARGIN_MS);
  while (Date.now() + PAIR_RELEASE_POLL_MS < until) {
    await sleep(PAIR_RELEASE_POLL_MS);
    const again = await warm.pool.claim(binding, size, busyUntil);
    if (again) return again;
  }
  return undefined;
}

/**
 * Stops a runner taken out of the pool and frees its slot. Its slot stays held if StopTask failed:
 * the runner then exits by itself, at the latest when its record says.
 */
async function stopRunner(ctx: SessionContext, warm: WarmRunners, runner: RunnerRecord, why: string) {
  try {
    await stopSandboxTask(ctx, runner.taskArn, why);
  } catch {
    return;
  }
  await warm.pool.remove(runner);
}

/** The error a run that found no sandbox in time answers with (503, Retry-After). */
export function capacityError(
  reason: CapacityReason,
  ceiling?: number,
  taskStartMs?: number,
): SandboxCapacityError {
  const wait = CAPACITY_RETRY_AFTER_SECONDS[reason];
  const messages: Record<CapacityReason, string> = {
    ceiling: `All ${ceiling} sandboxes this platform may run at once are busy; try again in ${wait} s`,
    quota: `No sandbox could start: the platform's cloud account has reached its Fargate vCPU quota; try again in ${wait} s`,
    capacity: `No sandbox could start: AWS Fargate has no capacity for it now; try again in ${wait} s`,
    start: `No sandbox is free, and starting one and running in it takes about ${Math.ceil(((taskStartMs ?? 0) + CAPACITY_WAIT_MARGIN_MS) / 1000)} s, more than this call has left; try again in ${wait} s`,
  };
  return new SandboxCapacityError(reason, messages[reason], wait);
}

/**
 * The run's task from the pool: claims a runner for (workspace, agent version), or starts one
 * claimed for it, and writes the run into the claimed slot with how long the runner then waits
 * for the pair's next run (runner-idle-wait.ts, from the pair's traffic noted here).
 */
export async function leaseWarmRunner(
  ctx: SessionContext,
  warm: WarmRunners,
  run: { binding: RunnerBinding; manifest: RunManifest; size: FargateSize; deadlineMs: number },
  put: Put,
  poolPut: Put,
): Promise<WarmLease> {
  const { binding, manifest, size, deadlineMs } = run;
  // The traffic only tunes the wait: a pair whose calls cannot be counted waits the minimum.
  const gaps = await warm.pool.recordCall(binding).catch(() => []);
  const idleMs = idleWaitMs(gaps, warm.boundIdle);
  const claimed = await acquireRunner(ctx, warm, binding, size, deadlineMs + idleMs, deadlineMs, poolPut);
  const claim: RunnerClaim = { v: 3, binding, run: manifest, idleMs };
  await put(
    claimKey(claimed.record.runnerId, claimed.slot),
    Buffer.from(JSON.stringify(claim)),
    'application/json',
  );
  const refilled = topUpPool(ctx, warm, poolPut).then(
    () => undefined,
    () => undefined,
  );
  const { record } = claimed;
  return {
    taskArn: record.taskArn,
    refilled,
    release: async (endedAtMs?: number) => {
      const from = Math.min(endedAtMs ?? Date.now(), Date.now());
      const kept = await warm.pool.release(
        claimed,
        Math.min(from + idleMs, record.expiresAt ?? record.startedAt + warm.lifetimeMs),
      );
      // A runner no claim can reach in time (no slot left, or its wait too short): stopped now
      // rather than left to idle out with its slot held.
      if (!kept) await stopRunner(ctx, warm, record, 'agenthost: runner done');
    },
    drop: () => warm.pool.remove(record),
  };
}
