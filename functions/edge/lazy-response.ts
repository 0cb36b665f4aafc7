/*
 * A Response that is built only if someone needs more of it than its status, headers and body as
 * given. Every JSON answer of the API is one (answer-mapping.ts, error-mapping.ts), and the shells
 * write it from those parts directly (`responseParts`): a real Response, its Headers and its body
 * stream are a dozen objects per answer, which, held for a call's duration, the garbage collector
 * promotes and collects late (docs/performance.md, "Against another checkout, side by side").
 * Anything else (a test reading `.json()`, `.body`) gets the real Response, built once. The same
 * technique as @hono/node-server's Response.
 */

import { forwardGetters, forwardMethods } from './lazy-members.ts';

const parts = Symbol('parts');
const built = Symbol('built');

export interface ResponseParts {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array | null;
}

/** A Response as `prototype` makes one: it is a Response (its prototype's members forward to one). */
interface Lazy extends Response {
  [parts]: ResponseParts;
  [built]?: Response;
}

function real(self: Lazy): Response {
  const p = self[parts];
  self[built] ??= new Response(p.body as ConstructorParameters<typeof Response>[0], {
    status: p.status,
    headers: p.headers,
  });
  return self[built];
}

const prototype: object = Object.create(Response.prototype, {
  status: {
    get(this: Lazy) {
      return this[parts].status;
    },
  },
  ok: {
    get(this: Lazy) {
      return this[parts].status >= 200 && this[parts].status < 300;
    },
  },
});
forwardGetters(prototype, ['headers', 'body', 'bodyUsed', 'redirected', 'statusText', 'type', 'url'], real);
forwardMethods(prototype, ['arrayBuffer', 'blob', 'bytes', 'clone', 'formData', 'json', 'text'], real);

/** A Response of `body` (null for none) with `status` and `headers`, built only if needed. */
export function lazyResponse(
  body: string | Uint8Array | null,
  status: number,
  headers: Record<string, string>,
): Response {
  const response: Lazy = Object.create(prototype);
  response[parts] = { status, headers, body };
  return response;
}

/** The parts of a response made by lazyResponse and not built since; undefined for any other. */
export function responseParts(response: Response): ResponseParts | undefined {
  const lazy: Partial<Lazy> = response;
  return lazy[parts] && !lazy[built] ? lazy[parts] : undefined;
}

/**
 * `headers` with each name once whatever its case, the last value winning, and without
 * Content-Length (the shell sets the body's own).
 */
export function distinctHeaders(headers: Record<string, string>): Record<string, string> {
  // Most answers name each header once and leave Content-Length to the shell: a copy of the object
  // as it is, which V8 makes in one step, not a property stored by name at a time (each a lookup
  // in an object of changing shape, every answer).
  if (!repeatsOrLength(headers)) return { ...headers };
  const out: Record<string, string> = {};
  // The name each lower-cased name was last given as (a null-prototype object: no Map per answer).
  const names: Record<string, string> = Object.create(null);
  for (const name in headers) {
    const lower = name.toLowerCase();
    if (lower === 'content-length') continue;
    const earlier = names[lower];
    if (earlier !== undefined && earlier !== name) delete out[earlier];
    names[lower] = name;
    out[name] = headers[name] as string;
  }
  return out;
}

/** Whether `headers` names one header twice (in any case), or Content-Length. */
function repeatsOrLength(headers: Record<string, string>): boolean {
  const lowered: string[] = [];
  for (const name in headers) {
    const lower = name.toLowerCase();
    // A few names an answer: a look along them costs less than a set of them.
    if (lower === 'content-length' || lowered.includes(lower)) return true;
    lowered.push(lower);
  }
  return false;
}
