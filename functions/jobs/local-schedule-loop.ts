import { advanceDueSchedule } from '../core/schedules/schedule-fire.ts';
import { scheduleKeys } from '../core/schedules/schedule-record.ts';
import { executeRun } from '../core/schedules/schedule-runs.ts';
import type { Deps } from '../platform/deps.ts';
import { LocalScheduler } from '../platform/local-deps.ts';

/** The loop never sleeps longer than this, so a missed wake-up or a clock jump is noticed. */
const MAX_SLEEP_MS = 30_000;

export interface ScheduleLoop {
  /** Fires everything due by the clock's now; resolves when the due slots are claimed and started. */
  tick(): Promise<void>;
  /** Resolves when no scheduled run is in flight. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The local cron engine: an in-process timer over the stored schedule records (the due index,
 * GSI2, ordered by next run time). It sleeps until the earliest next run, then for each due
 * schedule advances next_run_at past now (recording slots missed while the platform was down;
 * catch-up policy in core/schedules/schedule-fire.ts), claims each slot to run and runs it, at most
 * `concurrency` runs at once. State lives in the store, so a restart resumes where it left off.
 */
export function startScheduleLoop(deps: Deps, options: { timers?: boolean } = {}): ScheduleLoop {
  const timers = options.timers ?? true;
  const concurrency = deps.config.schedulerConcurrency;
  const inFlight = new Set<Promise<unknown>>();
  const queue: (() => Promise<unknown>)[] = [];
  let running = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let ticking: Promise<void> | undefined;
  let again = false;

  const pump = () => {
    while (running < concurrency && queue.length > 0) {
      const job = queue.shift() as () => Promise<unknown>;
      running++;
      const p = job()
        .catch((err) => deps.logger.error('scheduled run failed to start', { error: String(err) }))
        .finally(() => {
          running--;
          inFlight.delete(p);
          pump();
        });
      inFlight.add(p);
    }
  };

  const runSlot = (slot: string, schedule: Parameters<typeof executeRun>[1]) => {
    // The slot was claimed when next_run_at moved past it (advanceDueSchedule).
    const job = () => executeRun(deps, schedule, schedule.input_data, 'cron', { scheduledTime: slot });
    // Queued, so a burst of due schedules is started in slot order.
    queue.push(job);
    pump();
  };

  const pass = async () => {
    const now = deps.clock.now();
    const bound = `${now.toISOString()}#~`;
    let cursor: string | undefined;
    do {
      const page = await deps.store.query({
        index: 'gsi2',
        pk: scheduleKeys.due,
        sk: { lt: bound },
        limit: 500,
        cursor,
      });
      await Promise.all(
        page.items.map(async (item) => {
          const advanced = await advanceDueSchedule(deps, String(item.id), now);
          if (!advanced) return;
          for (const slot of advanced.slots) runSlot(slot, advanced.stored.schedule);
        }),
      );
      cursor = page.cursor;
    } while (cursor);
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
