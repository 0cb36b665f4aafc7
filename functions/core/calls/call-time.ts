import type { CoreDeps } from '../../ports/core-deps.ts';
import { isoString, parseIsoTime } from '../../shared/iso-time.ts';
import { requestIdTime } from '../../shared/request-ids.ts';

/**
 * How long before the call's start its request id may have been minted and still give the call its
 * time: the edge mints it when the request arrives, so a large body's upload lies between them.
 */
const ARRIVAL_WINDOW_MS = 60_000;

/**
 * When a call began (ISO, the time of its record): the time its request id carries when the id was
 * minted by this platform's edge for it (newRequestId), else the platform clock's now. A call whose
 * time is its id's is found from the id alone (its record's key is time and id), so its trace needs
 * no index entry of its own (trace-record.ts). An id of another shape (a schedule run's, or API
 * Gateway's of an earlier build on AWS), or one the platform clock disagrees with (a clock set in
 * tests, an id from long before), keeps the clock's time, and its trace is indexed by its id as before.
 */
export function callTime(deps: CoreDeps, requestId: string): string {
  const now = deps.clock.now();
  const minted = requestIdTime(requestId);
  if (minted === undefined) return isoString(now);
  const before = now.getTime() - minted;
  return before >= 0 && before <= ARRIVAL_WINDOW_MS ? isoString(new Date(minted)) : isoString(now);
}

/** Whether a call's time is its request id's: its record can be found from the id (callTime). */
export function timedByRequestId(at: string, requestId: string): boolean {
  const minted = requestIdTime(requestId);
  return minted !== undefined && parseIsoTime(at) === minted;
}
