import type { CoreDeps } from '../../ports/core-deps.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { findRun } from './call-run-reads.ts';
import { ENDED_STATUSES } from './call-run-record.ts';
import type { RunEventView } from './call-run-schemas.ts';
import { FINAL_EVENTS, runEventEntity, runEventKeys } from './run-event-record.ts';

/*
 * GET /runs/{run_id}/events: a run's events after a given one (docs/runs.md, "Following a run"),
 * read by the run's caller alone (404 otherwise, as for the run itself).
 */

/** The most events one read answers. */
export const MAX_EVENTS_PER_READ = 500;

export interface RunEventsRead {
  /** The events after the one asked for, in order. */
  events: RunEventView[];
  /** The run has ended and these are its last events: nothing will follow them. */
  ended: boolean;
}

/**
 * The caller's run's events after `after` (0: from the first), at most `limit`. A run that ended
 * without its last event in the log (interrupted: its process stopped) gets one made from its
 * result, numbered after the others, so a reader always ends on `result` or `error`.
 */
export async function readRunEvents(
  deps: CoreDeps,
  auth: AuthContext,
  runId: string,
  after: number,
  limit = MAX_EVENTS_PER_READ,
): Promise<RunEventsRead> {
  // The run first: its status is read before its events, so an ended run's last events are there.
  const run = await findRun(deps, auth, runId);
  const page = await deps.store.query({
    pk: runEventKeys.ofRun(runId),
    sk: { gt: runEventKeys.sk(after) },
    limit: Math.min(limit, MAX_EVENTS_PER_READ),
  });
  const events: RunEventView[] = page.items.map((item) => {
    const { seq, event, data, at } = runEventEntity.fromItem(item);
    return { id: seq, event, data, at };
  });
  const last = events.at(-1);
  if (last && FINAL_EVENTS.has(last.event)) return { events, ended: true };
  if (!ENDED_STATUSES.has(run.status) || page.cursor) return { events, ended: false };
  // Ended: its last event is in the log, before `after` or among these; or it is not (the run was
  // interrupted, or that write failed), and one is made from its record, numbered after the rest.
  const logged = last ?? (await lastLogged(deps, runId));
  if (logged && FINAL_EVENTS.has(logged.event) && logged.id <= Math.max(after, last?.id ?? 0))
    return { events, ended: true };
  if (run.result_body === null || events.length >= limit) return { events, ended: false };
  events.push({
    id: Math.max(after, logged?.id ?? 0) + 1,
    event: run.status === 'succeeded' ? 'result' : 'error',
    data: run.result_body,
    at: run.ended_at ?? deps.clock.now().toISOString(),
  });
  return { events, ended: true };
}

/** The run's last logged event, if any. */
async function lastLogged(deps: CoreDeps, runId: string): Promise<RunEventView | undefined> {
  const page = await deps.store.query({ pk: runEventKeys.ofRun(runId), reverse: true, limit: 1 });
  const item = page.items[0];
  if (!item) return undefined;
  const { seq, event, data, at } = runEventEntity.fromItem(item);
  return { id: seq, event, data, at };
}
