import { TIER_LIMITS } from '../core/accounts/tiers.ts';
import { advanceDueSchedules } from '../core/schedules/schedule-fire.ts';
import { type Schedule, scheduleKeys } from '../core/schedules/schedule-record.ts';
import { createRunLookups, type RunLookups } from '../core/schedules/schedule-run-lookups.ts';
import { executeRuns, type RunSpec } from '../core/schedules/schedule-runs.ts';
import type { Deps } from '../platform/deps.ts';
import { LocalScheduler } from '../platform/local-deps.ts';

/**
 * The share of an account's concurrent-request slots (its tier's) its scheduled runs may hold at
 * once: the rest stay free for its API calls during a burst. (A call's search for a free slot no
 * longer tries the slots this process holds first: core/calls/held-slots.ts.)
 */
const ACCOUNT_SHARE = 0.5;
/** The loop never sleeps longer than this, so a missed wake-up or a clock jump is noticed. */
const MAX_SLEEP_MS = 30_000;

interface Queued {
  spec: RunSpec;
  account: string;
  accountLimit: number;
}

export interface ScheduleLoop {
  /** Fires everything due by the clock's now; resolves when the due slots are claimed and started. */
  tick(): Promise<void>;
  /** Resolves when no scheduled run is in flight. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/** A claimed slot's run, queued with its account's bound on runs at once. */
async function queued(slot: string, schedule: Schedule, lookups: RunLookups): Promise<Queued> {
  // The slot was claimed when next_run_at moved past it (advanceDueSchedules).
  const spec: RunSpec = {
    schedule,
    input: schedule.input_data,
    trigger: 'cron',
    options: { scheduledTime: slot, lookups },
  };
  // The creator's tier bounds the account's runs at once; a run whose creator is gone fails
  // at its start (it needs no call slot).
  const tier = await lookups.auth(schedule).then(
    (auth) => auth.tier,
    () => undefined,
  );
  const accountLimit = tier
    ? Math.max(1, Math.floor(TIER_LIMITS[tier].concurrentRequests * ACCOUNT_SHARE))
    : 1;
  return { spec, account: schedule.created_by, accountLimit };
}

/**
 * The local cron engine: an in-process timer over the stored schedule records (the due index,
 * GSI2, ordered by next run time). It sleeps until the earliest next run, then for each page of
 * due schedules advances next_run_at past now (recording slots missed while the platform was
 * down; catch-up policy in core/schedules/schedule-fire.ts) and claims each slot to run, many
 * schedules to a transaction, and runs the slots: at most `concurrency` runs at once, and at most
 * ACCOUNT_SHARE of one account's concurrent requests (its tier's). A pass shares its creators'
 * account and membership lookups among its runs. State lives in the store, so a restart resumes
 * where it left off.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the loop's closures (pump, pass, arm, tick) share its queue, timer and in-flight state
export function startScheduleLoop(deps: Deps, options: { timers?: boolean } = {}): ScheduleLoop {
  const timers = options.timers ?? true;
  const concurrency = deps.config.schedulerConcurrency;
  const inFlight = new Set<Promise<unknown>>();
  const queue: Queued[] = [];
  /** Runs in flight per account (the schedule's creator, whose quotas its calls count against). */
  const perAccount = new Map<string, number>();
  let running = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let ticking: Promise<void> | undefined;
  let again = false;

  const pump = () => {
    // In queue order, skipping runs of an account at its limit (they go when one of its ends).
    const batch: Queued[] = [];
    for (let i = 0; running < concurrency && i < queue.length; ) {
      const next = queue[i] as Queued;
      const busy = perAccount.get(next.account) ?? 0;
      if (busy >= next.accountLimit) {
        i++;
        continue;
      }
      queue.splice(i, 1);
      running++;
      perAccount.set(next.account, busy + 1);
      batch.push(next);
    }
    if (batch.length === 0) return;
    // Begun together: their set-ups first, then every call, so none starts behind another's set-up.
    const started = executeRuns(
      deps,
      batch.map((q) => q.spec),
    );
    batch.forEach((q, i) => {
      const p = started
        .then((runs) => runs[i])
        .catch((err) => deps.logger.error('scheduled run failed to start', { error: String(err) }))
        .finally(() => {
          running--;
          const left = (perAccount.get(q.account) ?? 1) - 1;
          if (left > 0) perAccount.set(q.account, left);
          else perAccount.delete(q.account);
          inFlight.delete(p);
          pump();
        });
      inFlight.add(p);
    });
  };

  const pass = async () => {
    const now = deps.clock.now();
    const bound = `${now.toISOString()}#~`;
    // Lookups shared by this pass's runs (schedule-run-lookups.ts).
    const lookups = createRunLookups(deps);
    let cursor: string | undefined;
    do {
      const page = await deps.store.query({
        index: 'gsi2',
        pk: scheduleKeys.due,
        sk: { lt: bound },
        limit: 500,
        cursor,
      });
      const advanced = await advanceDueSchedules(deps, page.items, now);
      // Queued, so a burst of due schedules is started in slot order.
      queue.push(
        ...(await Promise.all(
          advanced.flatMap(({ stored, slots }) =>
            slots.map((slot) => queued(slot, stored.schedule, lookups)),
          ),
        )),
      );
      // The runs start when the pass has claimed its due slots, or as many as run at once: runs
      // started earlier would hold the remaining claims back, every step of theirs taking turns
      // with the pass's on the event loop (a second page of 500 took 2 s to claim that way).
      if (queue.length >= concurrency) pump();
      cursor = page.cursor;
    } while (cursor);
    pump();
  };

  const arm = async () => {
    if (stopped || !timers) return;
    clearTimeout(timer);
    const first = await deps.store.query({ index: 'gsi2', pk: scheduleKeys.due, limit: 1 });
    const nextAt = first.items[0] ? Date.parse(String(first.items[0].next_run_at)) : Number.POSITIVE_INFINITY;
    const delay = Math.max(0, Math.min(MAX_SLEEP_MS, nextAt - deps.clock.now().getTime()));
    if (stopped) return;
    timer = setTimeout(() => void tick(), delay);
    timer.unref?.();
  };

  const tick = async (): Promise<void> => {
    if (ticking) {
      again = true;
      return ticking;
    }
    ticking = (async () => {
      do {
        again = false;
        try {
          await pass();
        } catch (err) {
          deps.logger.error('schedule loop pass failed', { error: String(err) });
        }
      } while (again && !stopped);
      try {
        await arm();
      } catch (err) {
        deps.logger.error('schedule loop could not re-arm', { error: String(err) });
        if (!stopped && timers) timer = setTimeout(() => void tick(), 1000);
      }
    })().finally(() => {
      ticking = undefined;
    });
    return ticking;
  };

  if (deps.scheduler instanceof LocalScheduler) {
    deps.scheduler.onChange = () => void tick();
  }
  void tick();

  return {
    tick,
    async idle() {
      while (queue.length > 0 || inFlight.size > 0 || ticking) {
        await ticking;
        await Promise.allSettled([...inFlight]);
      }
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      if (deps.scheduler instanceof LocalScheduler) deps.scheduler.onChange = undefined;
      await ticking;
      queue.length = 0;
      await Promise.allSettled([...inFlight]);
    },
  };
}
