import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Client } from 'openapi-fetch';
import {
  type AgentRef,
  type CallEnvelope,
  type CallOptions,
  type CallResult,
  callResult,
  refText,
  sendCall,
} from './call.ts';
import { AgentHostError, type ErrorEnvelope, STATUS_OF, unwrap } from './errors.ts';
import type { JsonValue, paths } from './generated/openapi.ts';

/** One event of a streamed call (docs/calls.md, "Streamed calls"), ending with its result. */
export type StreamEvent<Out> =
  /** A piece of the answer, as the model writes it. */
  | { type: 'delta'; text: string }
  /** A managed loop's tool call, or a call of one of its dependencies (`kind: 'agent'`), once ended. */
  | { type: 'step'; kind: 'tool' | 'agent'; name: string; outcome: 'ok' | 'error'; duration_ms: number }
  /** The last event: what `agents.call` returns for the same input. */
  | { type: 'result'; result: CallResult<Out> };

/**
 * `agents.stream`: the call as Server-Sent Events, read as they arrive. A refusal before the call
 * runs, or an `error` event after, is thrown as AgentHostError (the latter with the status a plain
 * call's error would have had). Breaking out of the loop (or the options' signal) hangs up, which
 * stops the call on the platform.
 */
export async function* streamAgent<
  In extends object = Record<string, JsonValue>,
  Out = Record<string, JsonValue>,
>(
  api: Client<paths>,
  ref: string | AgentRef<In, Out>,
  input: In,
  options: CallOptions = {},
): AsyncGenerator<StreamEvent<Out>, void, undefined> {
  const result = await sendCall(api, refText(ref), input, options, 'stream');
  const body = unwrap(result) as unknown;
  const headers = result.response.headers;
  if (!headers.get('content-type')?.startsWith('text/event-stream')) {
    // An answer that did not stream (a platform that answers the plain envelope).
    const envelope = (
      typeof body === 'string' ? JSON.parse(body) : await new Response(body as ReadableStream).json()
    ) as CallEnvelope;
    yield { type: 'result', result: callResult<Out>(envelope, headers) };
    return;
  }
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (m) => pending.push(m) });
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      while (pending.length > 0) {
        const m = pending.shift() as EventSourceMessage;
        const data = JSON.parse(m.data) as Record<string, unknown>;
        if (m.event === 'delta') yield { type: 'delta', text: String(data.text ?? '') };
        else if (m.event === 'step')
          yield { type: 'step', ...(data as Omit<Extract<StreamEvent<Out>, { type: 'step' }>, 'type'>) };
        else if (m.event === 'result') {
          finished = true;
          yield { type: 'result', result: callResult<Out>(data as CallEnvelope, headers) };
          return;
        } else if (m.event === 'error') {
          finished = true;
          const envelope = data as ErrorEnvelope;
          throw new AgentHostError(STATUS_OF[envelope.error.code] ?? 500, envelope);
        }
      }
    }
    throw new AgentHostError(502, {
      error: {
        code: 'INTERNAL_ERROR',
        message: 'The call’s event stream ended before its result',
        is_retryable: true,
      },
      metadata: { request_id: headers.get('x-request-id') ?? '' },
    });
  } finally {
    // Left early (a break, a throw in the caller's loop): hang up, which stops the call.
    if (!finished) await reader.cancel().catch(() => undefined);
    else reader.releaseLock();
  }
}
