import { setTimeout as delay } from 'node:timers/promises';
import { ConditionFailedError, TransactionCanceledError } from '../ports/store.ts';

/**
 * Revision-checked updates, in one place: read a record, decide its next state, write it under a
 * condition on what was read, and on a lost race (another writer moved it meanwhile) read and
 * decide again. Records that are written this way carry a counter (`rev`, a task's `version`, an
 * agent head's `latest_number`); the conditioned op of a transaction is named REVISION_OP.
 */

/** The name of the revision-conditioned op in a transaction (TransactOp.name). */
export const REVISION_OP = 'revision';

/** The write lost the race: its revision condition failed (a put, or the REVISION_OP of a transaction). */
export function lostRevisionRace(err: unknown): boolean {
  return (
    err instanceof ConditionFailedError ||
    (err instanceof TransactionCanceledError && err.conditionFailed(REVISION_OP))
  );
}

/**
 * A `backoff` for writers that race: a wait drawn at random from a window that doubles each
 * attempt (10 ms, 20 ms, … up to 250 ms). Writers that lost together otherwise retry together, and
 * only one of them wins each round: twelve publishes of one agent landing at once left two without
 * a version after ten tries.
 */
export const spreadRetries = (attempt: number): Promise<void> =>
  delay(Math.random() * Math.min(250, 10 * 2 ** attempt));

export interface RevisionUpdate<S, D> {
  /** Tries at most this many times. */
  attempts: number;
  /** Reads the current state; undefined when there is none (the update is skipped). */
  load: () => Promise<S | undefined>;
  /** The next state from the current one, or undefined to leave it (skipped); a throw propagates. */
  decide: (current: S) => D | undefined | Promise<D | undefined>;
  /** Writes the decision under the revision condition. */
  write: (current: S, decision: D) => Promise<void>;
  /** Which write failures are lost races, to retry (default lostRevisionRace); others propagate. */
  lostRace?: (err: unknown) => boolean;
  /** Waits before the next attempt (after attempt `attempt`, from 0); default none. */
  backoff?: (attempt: number) => Promise<void>;
}

export type RevisionOutcome<S, D> =
  | { status: 'written'; current: S; decision: D }
  | { status: 'skipped' }
  /** Every attempt lost its race; `error` is the last write's failure. */
  | { status: 'contended'; error: unknown };

export async function updateWithRevision<S, D>(update: RevisionUpdate<S, D>): Promise<RevisionOutcome<S, D>> {
  const lostRace = update.lostRace ?? lostRevisionRace;
  let error: unknown;
  for (let attempt = 0; attempt < update.attempts; attempt++) {
    const current = await update.load();
    const decision = current === undefined ? undefined : await update.decide(current);
    if (current === undefined || decision === undefined) return { status: 'skipped' };
    try {
      await update.write(current, decision);
      return { status: 'written', current, decision };
    } catch (err) {
      if (!lostRace(err)) throw err;
      error = err;
    }
    if (attempt < update.attempts - 1) await update.backoff?.(attempt);
  }
  return { status: 'contended', error };
}
