/** What an operation may answer besides its JSON body: the shapes the edge sends (edge/answer-mapping.ts). */
/** An operation's answer with extra response headers (Deprecation, Sunset, Link …). */
export class Reply<T> {
  readonly body: T;
  readonly headers: Record<string, string>;
  constructor(body: T, headers: Record<string, string>) {
    this.body = body;
    this.headers = headers;
  }
}

/** The answer to a CORS preflight (OPTIONS) on a known path: 204 with the path's methods. */
export class PreflightReply {
  readonly methods: string[];
  constructor(methods: string[]) {
    this.methods = methods;
  }
}

/** A page instead of JSON (the local checkout page): sent as text/html, as is. */
export class HtmlReply {
  readonly html: string;
  constructor(html: string) {
    this.html = html;
  }
}

/**
 * A protocol's own answer (a route with `protocol`, such as MCP's JSON-RPC): its status, headers
 * and body are sent as they are. The platform adds only X-Request-Id, Cache-Control and the
 * rate-limit headers.
 */
export class ProtocolReply {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  constructor(status: number, headers: Record<string, string>, body: string) {
    this.status = status;
    this.headers = headers;
    this.body = body;
  }
}

/**
 * A streamed answer (a call as Server-Sent Events: streamed-call.ts): 200, text/event-stream, the
 * body sent as it is written. The platform adds its usual headers.
 */
export class StreamReply {
  readonly stream: ReadableStream<Uint8Array>;
  /** Headers of the answer's own (a deprecated version's Deprecation, Sunset, Link). */
  readonly headers: Record<string, string>;
  constructor(stream: ReadableStream<Uint8Array>, headers: Record<string, string> = {}) {
    this.stream = stream;
    this.headers = headers;
  }
}
