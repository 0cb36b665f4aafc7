import type { IncomingMessage, ServerResponse } from 'node:http';
import { fetchRequest } from './fetch-request.ts';

/*
 * Node's request and response as the Fetch API's, for the Node shell (node-shell.ts): the request's
 * body is a stream read only when someone reads it, and left unread (not destroyed) when its reader
 * stops, so the shell can still answer and close the connection cleanly (lingering-close.ts).
 */

export function toFetchRequest(req: IncomingMessage, url: URL, method: string): Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    try {
      headers.append(raw[i] as string, raw[i + 1] as string);
    } catch {
      // A value the Fetch API refuses (Node's parser is laxer): the request goes on without it.
    }
  }
  return fetchRequest(url, method, headers, hasBody(req) ? incomingBody(req) : undefined);
}

/** Whether a request has a body to read (declared, or chunked). */
export function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** The body as a pull stream: nothing is read off the socket until a chunk is asked for. */
function incomingBody(req: IncomingMessage): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const chunk = await nextChunk(req);
        if (chunk === null) controller.close();
        else controller.enqueue(chunk);
      },
      cancel() {
        // Left unread: the shell closes the connection after its answer.
      },
    },
    { highWaterMark: 0 },
  );
}

function nextChunk(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const done = () => {
      req.off('readable', attempt);
      req.off('end', ended);
      req.off('error', failed);
      req.off('close', closed);
    };
    const attempt = () => {
      const chunk = req.read() as Buffer | null;
      if (chunk === null) return;
      done();
      resolve(chunk);
    };
    const ended = () => {
      done();
      resolve(null);
    };
    const failed = (err: Error) => {
      done();
      reject(err);
    };
    const closed = () => {
      done();
      if (req.complete) resolve(null);
      else reject(new Error('aborted'));
    };
    if (req.readableEnded) return resolve(null);
    req.on('readable', attempt);
    req.once('end', ended);
    req.once('error', failed);
    req.once('close', closed);
    attempt();
  });
}

/**
 * Writes `response` to `res`: a body of one chunk (every JSON answer) with its Content-Length in one
 * writeHead, a longer one as it comes (chunked), waiting on the client's reading.
 */
export async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | number | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'set-cookie') headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  const reader = response.body?.getReader();
  const first = reader ? await reader.read() : { done: true as const, value: undefined };
  if (first.done) {
    res.writeHead(response.status, headers);
    return void res.end();
  }
  const second = await (reader as ReadableStreamDefaultReader<Uint8Array>).read();
  if (second.done) {
    headers['content-length'] = first.value.byteLength;
    res.writeHead(response.status, headers);
    return void res.end(first.value);
  }
  res.writeHead(response.status, headers);
  res.write(first.value);
  let next: Uint8Array | undefined = second.value;
  while (next) {
    if (res.destroyed) return void (await reader?.cancel());
    if (!res.write(next)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
    const read = await (reader as ReadableStreamDefaultReader<Uint8Array>).read();
    next = read.done ? undefined : read.value;
  }
  res.end();
}
