import { createParser } from 'eventsource-parser';

/** One Server-Sent Event as a client reads it, with when it arrived (ms since the request began). */
export interface ReadEvent {
  /** Its `id:` field, when it has one (a run's events: the number to resume after). */
  id?: string | undefined;
  event: string;
  data: string;
  at: number;
}

/**
 * Reads a text/event-stream answer to its end with eventsource-parser (the parser the AI SDK and the
 * MCP SDK read streams with): its events and its comment lines, each with its arrival time.
 * `onEvent` sees each event as it arrives; returning true stops reading (the client hangs up).
 */
export async function readEventStream(
  res: Response,
  startedAt: number,
  onEvent?: (e: ReadEvent) => boolean | undefined,
): Promise<{ events: ReadEvent[]; comments: string[] }> {
  const events: ReadEvent[] = [];
  const comments: string[] = [];
  let stop = false;
  const parser = createParser({
    onEvent: (m) => {
      const e = { id: m.id, event: m.event ?? 'message', data: m.data, at: Date.now() - startedAt };
      events.push(e);
      if (onEvent?.(e)) stop = true;
    },
    onComment: (c) => comments.push(c),
  });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(decoder.decode(value, { stream: true }));
    if (stop) {
      await reader.cancel();
      break;
    }
  }
  return { events, comments };
}
