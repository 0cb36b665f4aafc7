import type { IncomingMessage, ServerResponse } from 'node:http';
import { fetchRequest } from '../edge/fetch-request.ts';
import { hostBody } from '../edge/host-body.ts';
import { forwardGetters, forwardMethods } from '../edge/lazy-members.ts';
import { distinctHeaders, responseParts } from '../edge/lazy-response.ts';
import { parsedUrl as target } from '../edge/request-url.ts';
import {
  ANSWER_SLICE_BYTES,
  type AnswerWriter,
  SMALL_ANSWER_BYTES,
  type UnreadAnswers,
} from './unread-answers.ts';

/*
 * Node's request and response as the Fetch API's, for the Node shell (node-shell.ts): the request's
 * body is a stream read only when someone reads it, and left unread (not destroyed) when its reader
 * stops, so the shell can still answer and close the connection cleanly (lingering-close.ts). A
 * body read whole into memory is read without the stream, straight from Node's request, with the
 * same rules (edge/host-body.ts).
 */

const incoming = Symbol('incoming');
const verb = Symbol('verb');
const headerCache = Symbol('headers');
const bodyCache = Symbol('body');
const built = Symbol('built');

/** A Request as `requestPrototype` makes one: it is a Request (its prototype's members answer or forward). */
interface LazyRequest extends Request {
  [incoming]: IncomingMessage;
  [target]: URL;
  [verb]: string;
  [headerCache]?: Headers;
  [bodyCache]?: ReadableStream<Uint8Array> | null;
  [built]?: Request;
}

function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    try {
      headers.append(raw[i] as string, raw[i + 1] as string);
    } catch {
      // A value the Fetch API refuses (Node's parser is laxer): the request goes on without it.
    }
  }
  return headers;
}

const source = Symbol('source');
const full = Symbol('full');

/** Headers as `headersPrototype` makes them: they are Headers (its prototype's members answer or forward). */
interface LazyHeaders extends Headers {
  [source]: IncomingMessage;
  [full]?: Headers;
}

function realHeaders(self: LazyHeaders): Headers {
  self[full] ??= headersOf(self[source]);
  return self[full];
}

/*
 * The request's headers as the Fetch API's Headers, read from the ones Node has parsed already:
 * `get` and `has` look a name up there (Node lower-cases the names, joins repeated values with
 * ", " and keeps the first of a repeated Authorization, Content-Type or Content-Length, as the
 * platform always read them), and anything else builds the real Headers once. Building them for
 * every request, a dozen validated appends, was the edge's largest cost in the gateway bench.
 */
const headersPrototype: object = Object.create(Headers.prototype, {
  get: {
    value(this: LazyHeaders, name: string): string | null {
      if (this[full]) return this[full].get(name);
      const headers = this[source].headers;
      // The edge asks in lower case, as Node keeps them: the name as given first, lowered only
      // when that finds no header's value (a name of another case, an absent header).
      let value = headers[name];
      if (typeof value !== 'string') value = headers[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
  },
  has: {
    value(this: LazyHeaders, name: string): boolean {
      if (this[full]) return this[full].has(name);
      const headers = this[source].headers;
      return typeof headers[name] === 'string' || headers[name.toLowerCase()] !== undefined;
    },
  },
});
forwardMethods(
  headersPrototype,
  ['append', 'delete', 'entries', 'forEach', 'getSetCookie', 'keys', 'set', 'values', Symbol.iterator],
  realHeaders,
);

function lazyHeaders(req: IncomingMessage): Headers {
  const headers: LazyHeaders = Object.create(headersPrototype);
  headers[source] = req;
  return headers;
}

function bodyOf(self: LazyRequest): ReadableStream<Uint8Array> | null {
  if (self[bodyCache] === undefined)
    self[bodyCache] = hasBody(self[incoming]) ? incomingBody(self[incoming]) : null;
  return self[bodyCache];
}

function real(self: LazyRequest): Request {
  self[built] ??= fetchRequest(
    self[target],
    self[verb],
    headersOf(self[incoming]),
    bodyOf(self) ?? undefined,
  );
  return self[built];
}

/*
 * The request is built as the Fetch API's only when something asks for more than its method,
 * URL, headers and body: the edge asks for no more, and a real Request (its AbortSignal, its
 * body's wrapping) is a dozen objects a request that a call holds for its whole duration. The technique of @hono/node-server's request.
 */
const requestPrototype: object = Object.create(Request.prototype, {
  method: {
    get(this: LazyRequest) {
      return this[verb];
    },
  },
  url: {
    get(this: LazyRequest) {
      return this[target].href;
    },
  },
  headers: {
    get(this: LazyRequest) {
      this[headerCache] ??= lazyHeaders(this[incoming]);
      return this[headerCache];
    },
  },
  body: {
    get(this: LazyRequest) {
      return bodyOf(this);
    },
  },
  [hostBody]: {
    value(this: LazyRequest, take: (chunk: Buffer) => boolean): Promise<boolean> | undefined {
      if (this[bodyCache] !== undefined) return undefined;
      // Its chunks go to `take`: no stream is left to read them from.
      this[bodyCache] = null;
      return hasBody(this[incoming]) ? readIncoming(this[incoming], take) : Promise.resolve(true);
    },
  },
});
forwardGetters(
  requestPrototype,
  ['bodyUsed', 'cache', 'credentials', 'destination', 'integrity', 'keepalive', 'mode'].concat([
    'redirect',
    'referrer',
    'referrerPolicy',
    'signal',
    'duplex',
  ]),
  real,
);
forwardMethods(requestPrototype, ['arrayBuffer', 'blob', 'bytes', 'clone', 'formData', 'json', 'text'], real);

/** Node's request as a Fetch API Request (see requestPrototype). */
export function toFetchRequest(req: IncomingMessage, url: URL, method: string): Request {
  const request: LazyRequest = Object.create(requestPrototype);
  request[incoming] = req;
  request[target] = url;
  request[verb] = method;
  return request;
}

/** Whether a request has a body to read (declared, or chunked). */
export function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * The body as a pull stream: nothing is read off the socket until a chunk is asked for, and a
 * reader that stops leaves the rest unread (not destroyed).
 */
function incomingBody(req: IncomingMessage): ReadableStream<Uint8Array> {
  let done = false;
  const stop = () => {
    done = true;
    req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    req.pause();
  };
  let controller: ReadableStreamDefaultController<Uint8Array>;
  const onData = (chunk: Buffer) => {
    controller.enqueue(chunk);
    if ((controller.desiredSize ?? 0) <= 0) req.pause();
  };
  const onEnd = () => {
    stop();
    controller.close();
  };
  const onError = (err: Error) => {
    stop();
    controller.error(err);
  };
  const onClose = () => {
    if (done) return;
    stop();
    if (req.complete) controller.close();
    else controller.error(new Error('aborted'));
  };
  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        req.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose);
        req.pause();
      },
      pull() {
        if (!done) req.resume();
      },
      cancel() {
        // Left unread: the shell closes the connection after its answer.
        stop();
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * The body handed to `take` a chunk at a time as Node parses it (the request's host reading:
 * edge/host-body.ts), as incomingBody's stream would give it, without the stream: resolves true at
 * its end, false once `take` answers false, which leaves the rest unread (not destroyed), and
 * rejects when the client goes away before its end.
 */
function readIncoming(req: IncomingMessage, take: (chunk: Buffer) => boolean): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const stop = () => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      req.pause();
    };
    const onData = (chunk: Buffer) => {
      let more: boolean;
      try {
        more = take(chunk);
      } catch (err) {
        more = false;
        reject(err);
      }
      if (more) return;
      stop();
      resolve(false);
    };
    const onEnd = () => {
      stop();
      resolve(true);
    };
    const onError = (err: Error) => {
      stop();
      reject(err);
    };
    const onClose = () => {
      stop();
      if (req.complete) resolve(true);
      else reject(new Error('aborted'));
    };
    req.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose);
    req.resume();
  });
}

/**
 * The size in bytes of an answer's body of one piece (every JSON answer), before it is written;
 * undefined for a streamed body. A string short enough to be small whatever its characters is not
 * measured: measuring is a pass over it.
 */
export function answerBytes(response: Response): number | undefined {
  const body = responseParts(response)?.body;
  if (body === undefined) return undefined;
  if (body === null) return 0;
  if (typeof body !== 'string') return body.byteLength;
  return body.length * 3 <= SMALL_ANSWER_BYTES ? body.length : Buffer.byteLength(body);
}

/**
 * Writes `response` to `res`: a body of one piece (every JSON answer) with its Content-Length in
 * one writeHead, a longer one as it comes (chunked); either way a large body goes out a slice at a
 * time, each once the client has taken the last, counted in `unread` for the client's `address`
 * until it has (unread-answers.ts).
 */
export async function writeResponse(
  res: ServerResponse,
  response: Response,
  unread: UnreadAnswers,
  address: string,
): Promise<void> {
  const parts = responseParts(response);
  if (parts) {
    // One writeHead with every header, not a setHeader each: Node then skips its header map and
    // validates each header once (docs/performance.md, "Call gateway overhead", item 15).
    const headers: Record<string, string | number> = distinctHeaders(parts.headers);
    const body = typeof parts.body === 'string' ? Buffer.from(parts.body) : parts.body;
    if (body && body.byteLength > 0) headers['Content-Length'] = body.byteLength;
    res.writeHead(parts.status, headers);
    if (body && body.byteLength > ANSWER_SLICE_BYTES) return unread.writer(res, address).body(body);
    res.end(body ?? undefined);
    return unread.ended(res, address);
  }
  const headers: Record<string, string | number | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'set-cookie') headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  const reader = response.body?.getReader();
  // A client gone mid-answer cancels the body at once, not at the next write: a streamed call's
  // producer (the call) stops when its stream is cancelled (streamed-call.ts).
  res.once('close', () => {
    if (!res.writableFinished) void reader?.cancel().catch(() => undefined);
  });
  const writer = unread.writer(res, address);
  if (reader && response.headers.get('content-type')?.startsWith('text/event-stream')) {
    // Events go out as they are written, the headers first: no chunk is held back to learn the length.
    res.writeHead(response.status, headers);
    res.flushHeaders();
    return pipeChunks(writer, res, reader, undefined);
  }
  const first = reader ? await reader.read() : { done: true as const, value: undefined };
  if (first.done) {
    res.writeHead(response.status, headers);
    return writer.end();
  }
  const second = await (reader as ReadableStreamDefaultReader<Uint8Array>).read();
  if (second.done) {
    headers['content-length'] = first.value.byteLength;
    res.writeHead(response.status, headers);
    return writer.body(first.value);
  }
  res.writeHead(response.status, headers);
  await writer.chunk(first.value);
  return pipeChunks(writer, res, reader as ReadableStreamDefaultReader<Uint8Array>, second.value);
}

/**
 * Writes `first` and then each chunk `reader` gives to `res` as it comes, reading the next only
 * once the client has taken the last: a body pulled from its source (a streamed call's events, a
 * file) is read no faster than the client reads.
 */
async function pipeChunks(
  writer: AnswerWriter,
  res: ServerResponse,
  reader: ReadableStreamDefaultReader<Uint8Array>,
  first: Uint8Array | undefined,
): Promise<void> {
  let next = first;
  for (;;) {
    if (next) {
      if (res.destroyed) return void (await reader.cancel().catch(() => undefined));
      await writer.chunk(next);
    }
    const read = await reader.read().catch(() => ({ done: true as const, value: undefined }));
    if (read.done) break;
    next = read.value;
  }
  if (!res.destroyed) writer.end();
}
