import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond } from '../../ports/store.ts';
import type { CallEvents, CallStep } from '../calls/call-context.ts';
import { type RunEventName, runEventEntity, runEventKeys } from './run-event-record.ts';

/*
 * The writer of a run's events (run-event-record.ts), as the engine reports them. A model's text
 * comes a few characters at a time: it is gathered and written as one `delta` every DELTA_MS, or
 * once DELTA_BYTES have gathered, so a run's log holds tens of items, not thousands. A step, and
 * the run's end, first write the text gathered before them: the log keeps the order of what
 * happened. Writes go one at a time, in order; a write that fails is logged and the run goes on
 * (its result is in its record whatever its events say).
 */

/** How long text is gathered before it is written as one `delta`. */
export const DELTA_MS = 250;
/** Text gathered past this many bytes is written at once. */
export const DELTA_BYTES = 8 * 1024;
/**
 * The most events a run's log holds: past it, text is no longer
 * written as deltas; the result has it all. Gathered every DELTA_MS, a run of 300 s writes at most
 * 1,200 deltas.
 */
export const MAX_RUN_EVENTS = 2_000;

export class RunEventLog {
  private readonly deps: CoreDeps;
  private readonly runId: string;
  /** When the run's record expires (epoch ms): its events with it. */
  private readonly expiresMs: number;
  private seq = 0;
  private text = '';
  private timer: NodeJS.Timeout | undefined;
  /** The writes so far, one after another. */
  private written: Promise<void> = Promise.resolve();

  constructor(deps: CoreDeps, runId: string, expiresMs: number, after = 0) {
    this.deps = deps;
    this.runId = runId;
    this.expiresMs = expiresMs;
    this.seq = after;
  }

  /**
   * The log of a run carried on by another process (edge/run-resume.ts): numbered on after the
   * events its first process wrote, so none is written twice and none is lost to a reader.
   */
  static async continued(deps: CoreDeps, runId: string, expiresMs: number): Promise<RunEventLog> {
    const page = await deps.store.query({ pk: runEventKeys.ofRun(runId), reverse: true, limit: 1 });
    const last = page.items[0];
    return new RunEventLog(deps, runId, expiresMs, last ? runEventEntity.fromItem(last).seq : 0);
  }

  /** The engine's reports, written to the log. */
  events(): CallEvents {
    return {
      delta: (text) => this.delta(text),
      step: (step) => this.step(step),
    };
  }

  /**
   * Writes what was gathered and waits for every write: called before the run's end is written,
   * so a reader that sees the run ended finds all its events. Its last event (`result` or
   * `error`) is not logged: readers make it from the run's record (run-event-reads.ts), which holds
   * the answer whatever its size, so it can never disagree with it.
   */
  async end(): Promise<void> {
    this.flush();
    await this.written;
  }

  private delta(text: string): Promise<void> {
    if (!text || this.seq >= MAX_RUN_EVENTS - 2) return Promise.resolve();
    this.text += text;
    if (Buffer.byteLength(this.text) >= DELTA_BYTES) {
      this.flush();
      // The engine waits for the write: a model faster than the store does not pile text up.
      return this.written;
    }
    this.timer ??= setTimeout(() => this.flush(), DELTA_MS);
    return Promise.resolve();
  }

  private step(step: CallStep): Promise<void> {
    this.flush();
    if (this.seq < MAX_RUN_EVENTS - 1) this.append('step', { ...step });
    return this.written;
  }

  /** Writes the gathered text as one `delta`. */
  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.text) return;
    const text = this.text;
    this.text = '';
    this.append('delta', { text });
  }

  private append(event: RunEventName, data: Record<string, unknown>): void {
    const item = runEventEntity.toItem({
      run_id: this.runId,
      seq: ++this.seq,
      event,
      data,
      at: this.deps.clock.now().toISOString(),
      expires_ms: this.expiresMs,
    });
    this.written = this.written.then(() =>
      this.deps.store.put(item, { condition: cond.notExists() }).catch((err: unknown) => {
        this.deps.logger.error('run event not written', {
          run_id: this.runId,
          event,
          error: String(err),
        });
      }),
    );
  }
}
