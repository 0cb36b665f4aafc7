import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Client } from 'openapi-fetch';
import { type AgentRef, type CallOptions, refText, sendCall } from './call.ts';
import { AgentHostError, unwrap } from './errors.ts';
import type { JsonValue, paths } from './generated/openapi.ts';

/*
 * Runs (docs/runs.md): a call started without waiting, its answer read later. `agents.start`
 * answers the run at once; `runs.wait` polls it to its end; `runs.follow` reads its events as they
 * are logged, and resumes after the last one it read if the connection drops.
 */

/** A run as GET /runs/{run_id} answers it. */
export type Run = paths['/runs/{run_id}']['get']['responses'][200]['content']['application/json'];

/** A page of a run's events, as JSON. */
type RunEventPage = paths['/runs/{run_id}/events']['get']['responses'][200]['content']['application/json'];

/** One of a run's events: a streamed call's (`delta`, `step`, last `result` or `error`), numbered from 1. */
export type RunEvent = RunEventPage['events'][number];

/** Starts `ref` as a run (`Prefer: respond-async`): the run, still running, once it was admitted. */
export async function startRun<In extends object = Record<string, JsonValue>>(
  api: Client<paths>,
  ref: string | AgentRef<In, unknown>,
  input: In,
  options: CallOptions = {},
): Promise<Run> {
  const result = await sendCall(api, refText(ref), input, options, 'run');
  return unwrap(result) as unknown as Run;
}

export interface WaitOptions {
  /** How often the run is read (default 1 s). */
  intervalMs?: number;
  /** Give up (an AgentHostError TIMEOUT) after this long (default: no limit). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Reads the run until it has ended; the ended run (its `result` is the plain call's answer). */
export async function waitForRun(
  get: (runId: string) => Promise<Run>,
  runId: string,
  { intervalMs = 1000, timeoutMs, signal }: WaitOptions = {},
): Promise<Run> {
  const until = timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
  for (;;) {
    const run = await get(runId);
    if (run.ended_at !== null) return run;
    signal?.throwIfAborted();
    if (Date.now() >= until)
      throw new AgentHostError(504, {
        error: {
          code: 'TIMEOUT',
          message: `Run ${runId} had not ended after ${timeoutMs} ms`,
          is_retryable: true,
        },
        metadata: { request_id: '' },
      });
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** An event as `runs.follow` reads it: its id, name and data (SSE carries no time). */
export type FollowedEvent = Omit<RunEvent, 'at'>;

export interface FollowOptions {
  /** Only the events after this id (default 0: from the first). */
  after?: number;
  signal?: AbortSignal;
}

/**
 * The run's events as Server-Sent Events, to its last (`result` or `error`, yielded too). A dropped
 * connection, or one the platform closed before the run ended, is opened again after the last
 * event read (`Last-Event-ID`): each event comes once.
 */
export async function* followRun(
  api: Client<paths>,
  runId: string,
  { after = 0, signal }: FollowOptions = {},
): AsyncGenerator<FollowedEvent, void, undefined> {
  let last = after;
  for (let attempt = 0; ; attempt++) {
    const result = await api.GET('/runs/{run_id}/events', {
      params: { path: { run_id: runId }, header: { 'Last-Event-ID': String(last) } },
      parseAs: 'stream',
      headers: { Accept: 'text/event-stream' },
      ...(signal ? { signal } : {}),
    });
    const body = unwrap(result) as unknown as ReadableStream<Uint8Array>;
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const pending: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (m) => pending.push(m) });
    let progressed = false;
    try {
      for (;;) {
        const read = await reader.read().catch(() => ({ done: true as const, value: undefined }));
        if (read.done) break;
        parser.feed(decoder.decode(read.value, { stream: true }));
        while (pending.length > 0) {
          const m = pending.shift() as EventSourceMessage;
          const event: FollowedEvent = {
            id: Number(m.id),
            event: m.event as RunEvent['event'],
            data: JSON.parse(m.data) as RunEvent['data'],
          };
          last = event.id;
          progressed = true;
          yield event;
          if (event.event === 'result' || event.event === 'error') return;
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
    signal?.throwIfAborted();
    if (!progressed) {
      // Closed with nothing new: the run may have ended before the event read last (a reader
      // that asked for the events after its last one), which the JSON answer says.
      const page = unwrap(
        await api.GET('/runs/{run_id}/events', {
          params: { path: { run_id: runId }, query: { after: last, limit: 1 } },
          ...(signal ? { signal } : {}),
        }),
      ) as RunEventPage;
      if (page.ended && page.events.length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 250 * 2 ** attempt)));
    } else attempt = -1;
    // Closed before the run's last event: opened again after the last one read.
  }
}
