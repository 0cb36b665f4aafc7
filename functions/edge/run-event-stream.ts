import type { RunEventsRead } from '../core/runs/run-event-reads.ts';
import type { Logger } from '../shared/logger.ts';
import { HEARTBEAT_MS } from './streamed-call.ts';

/*
 * A run's events followed as Server-Sent Events (GET /runs/{run_id}/events with `Accept:
 * text/event-stream`; docs/runs.md, "Following a run"): each event with its number as its SSE
 * `id`, as it is logged, until the run's last (`result` or `error`), then the stream ends. The log
 * is read again every POLL_MS while nothing is new, the same on every host: the process that runs
 * the run is not the one that answers this request (on AWS, another Lambda instance). A stream ends
 * after FOLLOW_MS even if the run has not: a client reconnects with `Last-Event-ID`, as SSE clients
 * do, before the function's timeout would cut it. Pulled: nothing is read while the client reads
 * nothing.
 */

export const POLL_MS = 500;
/** Under the calls function's timeout and API Gateway's streamed one (lib/module-functions.ts). */
export const FOLLOW_MS = 280_000;

const encoder = new TextEncoder();

export interface FollowOptions {
  pollMs?: number;
  heartbeatMs?: number;
  followMs?: number;
  logger?: Logger;
}

/** The events after `after` (`first`, already read), then every new one read with `read`. */
export function followRunEvents(
  read: (after: number) => Promise<RunEventsRead>,
  after: number,
  first: RunEventsRead,
  { pollMs = POLL_MS, heartbeatMs = HEARTBEAT_MS, followMs = FOLLOW_MS, logger }: FollowOptions = {},
): ReadableStream<Uint8Array> {
  const started = Date.now();
  let last = after;
  let pending: RunEventsRead | undefined = first;
  let sentAt = Date.now();
  let stop: (() => void) | undefined;
  let cancelled = false;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      stop = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Each pull sends something (events, a comment) or ends the stream: a pull that returned
      // with nothing queued would not be called again.
      for (;;) {
        if (cancelled) return;
        if (pending && pending.events.length > 0) {
          for (const e of pending.events)
            controller.enqueue(
              encoder.encode(`id: ${e.id}\nevent: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`),
            );
          last = pending.events.at(-1)?.id ?? last;
          sentAt = Date.now();
          if (pending.ended) controller.close();
          pending = undefined;
          return;
        }
        if (pending?.ended || Date.now() - started >= followMs) return controller.close();
        await pause(Math.min(pollMs, Math.max(0, heartbeatMs - (Date.now() - sentAt))));
        if (cancelled) return;
        if (Date.now() - sentAt >= heartbeatMs) {
          sentAt = Date.now();
          return controller.enqueue(encoder.encode(': keep-alive\n\n'));
        }
        try {
          pending = await read(last);
        } catch (err) {
          // The store failed: the stream ends, and the client resumes from its last id.
          logger?.error('run events not read', { error: String(err) });
          return controller.close();
        }
      }
    },
    cancel() {
      cancelled = true;
      stop?.();
    },
  });
}
