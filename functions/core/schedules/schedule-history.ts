// A schedule's history, readable after its deletion for HISTORY_DAYS: its runs and its timeline.

import type { CoreDeps } from '../../ports/core-deps.ts';
import { queryAll } from '../../ports/store.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { sizedPageOf } from '../payloads/answer-page.ts';
import { eventFromItem, type ScheduleEvent, scheduleEventKeys } from './schedule-events.ts';
import { answeredRun } from './schedule-run-output.ts';
import { type RunRecord, runFromItem, runKeys } from './schedule-run-record.ts';
import type { ScheduleEventsQuery, ScheduleRunsQuery } from './schedule-schemas.ts';

import { loadSchedule } from './schedules.ts';

/** GET .../runs: newest first; status `failed` means error or timeout; `fields` selects fields. */
export async function listScheduleRuns(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
  query: ScheduleRunsQuery,
): Promise<{ runs: Partial<RunRecord>[]; total: number; next_offset: number | null }> {
  await loadSchedule(deps, auth, workspaceId, id, 'member', true);
  const items = await queryAll(deps.store, { pk: runKeys.ofSchedule(id), reverse: true });
  const wanted = (r: RunRecord) =>
    !query.status ||
    (query.status === 'failed' ? r.status === 'error' || r.status === 'timeout' : r.status === query.status);
  const all = items.map(runFromItem).filter(wanted);
  const fields = query.fields;
  const slice = all.slice(query.offset, query.offset + query.limit);
  // Outputs stored apart (over 64 KiB) are read back, or linked when too large to answer; each is
  // within the inline bound, but fifty of them need not be, so the page stops at the budget
  // (answer-page.ts) and reads no output it will not answer.
  const { page, next_offset } = await sizedPageOf(slice, query.offset, all.length, async (r) => {
    const answered = await answeredRun(deps, r);
    if (!fields) return answered as Partial<RunRecord>;
    return Object.fromEntries(fields.map((f) => [f, answered[f]])) as Partial<RunRecord>;
  });
  return { runs: page, total: all.length, next_offset };
}

/** GET .../events: the timeline, newest first. */
export async function listScheduleEvents(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  id: string,
  query: ScheduleEventsQuery,
): Promise<{ events: ScheduleEvent[]; total: number }> {
  await loadSchedule(deps, auth, workspaceId, id, 'member', true);
  const items = await queryAll(deps.store, { pk: scheduleEventKeys.ofSchedule(id), reverse: true });
  const all = items.map(eventFromItem).filter((e) => !query.type || e.type === query.type);
  return { events: all.slice(query.offset, query.offset + query.limit), total: all.length };
}
