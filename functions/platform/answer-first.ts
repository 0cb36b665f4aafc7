import type { AnswerFirstOffer } from '../core/calls/call-context.ts';
import type { Store } from '../ports/store.ts';
import type { Logger } from '../shared/logger.ts';

/**
 * When the local server sends a call's answer before the call's record is committed.
 *
 * A call's record (with its log line and its concurrency slot's release) is written in a
 * transaction of its own once the answer is known. Its failure never changes the answer (the
 * record is logged as not written), so the answer need not wait for its commit, provided that
 * whoever reads the store after seeing the answer finds the record. Two rules keep that:
 *
 * - The answer goes out first only while its request is the only one the server is handling.
 *   Alone, a call's commit cannot be shared with other calls' writes, and it is most of the time
 *   between the model's answer and the caller's (docs/performance.md, item 14). Under concurrency
 *   the answer waits for the commit as before, and the group commit keeps sharing one commit
 *   among many calls' writes.
 * - The record's write is requested (queued in the store) before the answer is sent, and once the
 *   answer is out the store is told so (Store.answeredBeforeCommit): until the record is written,
 *   every read in this process, from whatever request or caller, commits the queued writes first.
 *
 * Offered only by a store that queues its writes (the embedded one). Nothing offers it on AWS: a
 * Lambda's answer leaves when its handler returns, so the record is written first there, and
 * callers see the same.
 */
export class AnswerFirst {
  /** Requests being handled, from arrival until their answer and any work it left have settled. */
  private inFlight = 0;
  private readonly store: Store;
  private readonly logger: Logger;

  constructor(store: Store, logger: Logger) {
    this.store = store;
    this.logger = logger;
  }

  /** A request arrives. */
  begin(): RequestAnswer {
    this.inFlight++;
    return new RequestAnswer(this);
  }

  /** Takes `work` to settle after the answer, if the request is alone; see the class comment. */
  take(left: Promise<void>[], work: Promise<void>): boolean {
    if (this.inFlight !== 1 || !this.store.answeredBeforeCommit) return false;
    left.push(
      work.catch((err: unknown) => this.logger.error('work after an answer failed', { error: String(err) })),
    );
    return true;
  }

  /**
   * A request's answer went out: if it left work, reads must see that work's writes until it
   * settles (call the function returned then).
   */
  answered(left: readonly Promise<void>[]): (() => void) | undefined {
    return left.length > 0 ? this.store.answeredBeforeCommit?.() : undefined;
  }

  end(): void {
    this.inFlight--;
  }
}

/** One request's side of AnswerFirst: the offer its handler gets, and the work its answer left. */
export class RequestAnswer {
  private readonly left: Promise<void>[] = [];
  private readonly policy: AnswerFirst;
  /** Handed to the handler (LocalInvocation.answerFirst). */
  readonly offer: AnswerFirstOffer;

  constructor(policy: AnswerFirst) {
    this.policy = policy;
    this.offer = (work) => policy.take(this.left, work);
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
