import type { Logger } from '../../shared/logger.ts';
import type { SqliteStore } from './sqlite-store.ts';

/**
 * When the local platform's answer may go out before the work it handed to waitUntil: the
 * embedded store's rule, offered to the Node shell (functions/local-platform/node-shell.ts,
 * `earlyAnswers`) by the local composition. Without it the Node shell, like a Lambda, sends an
 * answer once that work is done.
 *
 * The work is a call's record (with its log line and its concurrency slot's release), written in
 * a transaction of its own once the answer is known. Its failure never changes the answer (the
 * record is logged as not written), so the answer need not wait for its commit, provided that
 * whoever reads the store after seeing the answer finds the record. Two rules keep that:
 *
 * - The answer goes out first only while its request is the only one the server is handling.
 *   Alone, a call's commit cannot be shared with other calls' writes, and it is most of the time
 *   between the model's answer and the caller's (docs/performance.md, item 14). Under concurrency
 *   the answer waits for the commit as before, and the group commit keeps sharing one commit
 *   among many calls' writes.
 * - The work's writes are requested (queued in the group commit) before the answer is sent, and
 *   once the answer is out the store is told so (SqliteStore.answeredBeforeCommit): until the work
 *   settles, every read in this process, from whatever request or caller, commits the queued
 *   writes first.
 */
export class SqliteAnswerFirst {
  /** Requests being handled, from arrival until their answer and any work it left have settled. */
  private inFlight = 0;
  private readonly store: SqliteStore;
  private readonly logger: Logger;

  constructor(store: SqliteStore, logger: Logger) {
    this.store = store;
    this.logger = logger;
  }

  /** A request arrives. */
  begin(): RequestAnswer {
    this.inFlight++;
    return new RequestAnswer(this);
  }

  /** Takes `work` to settle after the answer, if the request is alone; see the class comment. */
  take(left: Promise<void>[], work: Promise<unknown>): boolean {
    if (this.inFlight !== 1) return false;
    left.push(
      work.then(
        () => undefined,
        (err: unknown) => this.logger.error('work after an answer failed', { error: String(err) }),
      ),
    );
    return true;
  }

  /**
   * A request's answer went out: if it left work, reads must see that work's writes until it
   * settles (call the function returned then).
   */
  answered(left: readonly Promise<void>[]): (() => void) | undefined {
    return left.length > 0 ? this.store.answeredBeforeCommit() : undefined;
  }

  end(): void {
    this.inFlight--;
  }
}

/** One request's side of SqliteAnswerFirst: the work its answer left. */
export class RequestAnswer {
  private readonly left: Promise<void>[] = [];
  private readonly policy: SqliteAnswerFirst;

  constructor(policy: SqliteAnswerFirst) {
    this.policy = policy;
  }

  /** Whether the answer may go out before `work` settles; if so, this request settles it. */
  take(work: Promise<unknown>): boolean {
    return this.policy.take(this.left, work);
  }

  /** After the answer is sent: waits for the work it left, then the request no longer counts. */
  async settle(): Promise<void> {
    const settled = this.policy.answered(this.left);
    try {
      await Promise.all(this.left);
    } finally {
      settled?.();
      this.policy.end();
    }
  }
}
