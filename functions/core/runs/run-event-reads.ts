import type { CoreDeps } from '../../ports/core-deps.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { findRun, getRun } from './call-run-reads.ts';
import { ENDED_STATUSES } from './call-run-record.ts';
import type { RunEventView } from './call-run-schemas.ts';
import { runEventEntity, runEventKeys } from './run-event-record.ts';

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
 * The caller's run's events after `after` (0: from the first), at most `limit`. The log holds what
 * the run reported as it ran (`delta`, `step`); its last event (`result` or `error`) is made from
 * its record once it has ended, numbered after the last logged one: the same id and data for every
 * reader, whatever it asked for, and the same body as GET /runs/{run_id} (a large output read back
 * from where it is kept). A run interrupted before it could end gets one too (call-run-reads.ts).
 */
export async function readRunEvents(
  deps: CoreDeps,
  auth: AuthContext,
  runId: string,
  after: number,
  limit = MAX_EVENTS_PER_READ,
): Promise<RunEventsRead> {
  // The run first: an ended run wrote every event of its log before its end, so they are all there.
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
  if (!ENDED_STATUSES.has(run.status) || page.cursor || run.result_body === null)
    return { events, ended: false };
  const lastId = events.at(-1)?.id ?? (await lastLoggedId(deps, runId));
  const finalId = lastId + 1;
  // Read past it already (a reader resuming after the last event): nothing more will come.
  if (after >= finalId) return { events, ended: true };
  if (events.length >= limit) return { events, ended: false };
  const { result } = await getRun(deps, auth, runId);
  events.push({
    id: finalId,
    event: run.status === 'succeeded' ? 'result' : 'error',
    data: result?.body ?? run.result_body,
    at: run.ended_at ?? deps.clock.now().toISOString(),
  });
  return { events, ended: true };
}

/** The id of the run's last logged event, 0 when it logged none. */
async function lastLoggedId(deps: CoreDeps, runId: string): Promise<number> {
  const page = await deps.store.query({ pk: runEventKeys.ofRun(runId), reverse: true, limit: 1 });
  const item = page.items[0];
  return item ? runEventEntity.fromItem(item).seq : 0;
}
