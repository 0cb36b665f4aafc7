import type { CallEvents, CallResponse } from '../core/calls/call-context.ts';
import { routes } from '../platform/routes.ts';
import type { Logger } from '../shared/logger.ts';
import { preferredMediaType } from './accept-negotiation.ts';
import { sseAnswer } from './answers.ts';
import { errorEnvelope } from './error-answer.ts';
import { mappedError } from './error-mapping.ts';

/*
 * A call answered as Server-Sent Events (docs/calls.md, "Streamed calls"), for a caller that sends
 * `Accept: text/event-stream`. Until the gateway opens the stream (the call admitted, charged and
 * about to run) nothing is sent: a refusal is the ordinary JSON answer with its status, and a call
 * that ends before opening it is the ordinary answer too. Once open: `delta` and `step` events as
 * the engine reports them, a comment line while nothing else is sent, and last `result` (exactly
 * the body of a plain call) or `error` (the error envelope). A client that goes away aborts the
 * call (its signal), which ends it as a caller gone.
 *
 * The stream is pulled, not pushed: an event waits until the shell has written the ones before it
 * to the client's socket (STREAM_BUFFER_BYTES queued at most), and the engine awaits each event it
 * reports, so a client that stops reading stops the model's stream too (the AI SDK reads the
 * vendor's answer only as asked), instead of the events piling up in memory.
 */

/** Bytes of events queued for the shell before the engine waits for the client to read them. */
export const STREAM_BUFFER_BYTES = 16 * 1024;

/** A comment line goes out after this long with nothing else sent (proxies close idle streams). */
export const HEARTBEAT_MS = 15_000;

/** The call route's answers, its default (the JSON envelope) first. */
const CALL_ANSWER_TYPES = ['application/json; charset=utf-8', 'text/event-stream; charset=utf-8'] as const;

/**
 * Whether the caller prefers the call as Server-Sent Events by its Accept header (RFC 9110's
 * negotiation: a tie, or neither acceptable, is the JSON answer).
 */
export function wantsEventStream(accept: string | undefined): boolean {
  return preferredMediaType(accept, CALL_ANSWER_TYPES) === CALL_ANSWER_TYPES[1];
}

/** The stream a streamed call opens: its events always go to the client (a CallStream). */
export interface EventStream {
  open(headers: Record<string, string>): CallEvents;
}

const encoder = new TextEncoder();

/** One SSE event: its name and its data as one JSON line. */
function event(name: string, data: unknown): Uint8Array {
  return encoder.encode(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
}

/**
 * Runs `call` (given the stream to open and the caller's signal) and answers it: the event stream once
 * the call opened its stream, else the call's own answer or its error (thrown).
 */
export function streamedCall(
  requestId: string,
  call: (stream: EventStream, signal: AbortSignal) => Promise<CallResponse>,
  {
    heartbeatMs = HEARTBEAT_MS,
    logger,
    waitUntil,
  }: {
    heartbeatMs?: number;
    logger?: Logger;
    /**
     * The host's waitUntil: a client that hangs up ends the stream at once, and the call it
     * aborted still has its record to write; handed over then, a Lambda sees it through before it
     * returns (and freezes), as the Node shell does after the stream's end.
     */
    waitUntil?: (work: Promise<unknown>) => void;
  } = {},
): Promise<CallResponse | Response> {
  const gone = new AbortController();
  /** The call, once started (what a hang-up hands to waitUntil). */
  let running: Promise<unknown> | undefined;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  let heartbeat: NodeJS.Timeout | undefined;
  // The engine's wait for the client to read (resolved by the shell's next pull, or the cancel).
  let demand: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  const wanted = () => {
    wake?.();
    demand = wake = undefined;
  };
  /** Queues `bytes`; resolves once the client has read enough that more may be queued. */
  const send = (bytes: Uint8Array): Promise<void> => {
    if (closed) return Promise.resolve();
    controller.enqueue(bytes);
    heartbeat?.refresh();
    if ((controller.desiredSize ?? 1) > 0) return Promise.resolve();
    demand ??= new Promise((resolve) => {
      wake = resolve;
    });
    return demand;
  };
  const finish = (last: Uint8Array) => {
    if (closed) return;
    void send(last);
    closed = true;
    clearInterval(heartbeat);
    controller.close();
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      pull() {
        wanted();
      },
      cancel() {
        // The client hung up: the call stops now (its model request, its sandbox run).
        closed = true;
        clearInterval(heartbeat);
        wanted();
        gone.abort();
        if (running) waitUntil?.(running);
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: STREAM_BUFFER_BYTES }),
  );
  return new Promise((resolve, reject) => {
    let opened = false;
    const stream: EventStream = {
      open(headers): CallEvents {
        opened = true;
        // A stream its client is not reading needs no keep-alive (nor a comment queued behind it).
        heartbeat = setInterval(() => {
          if ((controller.desiredSize ?? 0) > 0) void send(encoder.encode(': keep-alive\n\n'));
        }, heartbeatMs);
        heartbeat.unref();
        resolve(sseAnswer(body, headers));
        return {
          delta: (text) => send(event('delta', { text })),
          step: (step) => send(event('step', step)),
        };
      },
    };
    const started = call(stream, gone.signal);
    running = started.catch(() => undefined);
    started.then(
      (result) => {
        const answer = { ...result.body, metadata: { ...result.body.metadata, request_id: requestId } };
        if (opened) finish(event('result', answer));
        else resolve(result);
      },
      (error: unknown) => {
        if (!opened) return reject(error);
        // The same error path as a plain answer's (error-mapping.ts), its envelope sent as the last event.
        const failure = mappedError(logger, error, {
          requestId,
          method: 'POST',
          route: routes.callAgent.path,
        });
        finish(event('error', errorEnvelope(failure, requestId)));
      },
    );
  });
}
