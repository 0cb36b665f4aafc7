/**
 * How a prompt call's request reaches the model's vendor when the platform sends it itself
 * (`generate` in functions/adapters/llm/ai-sdk-gateway.ts): one POST of a JSON body, the answer read
 * whole.
 * Two implementations: undici's pooled request API on the local platform (pooled-fetch.ts), the
 * runtime's global fetch in a Lambda (below), which keeps undici out of the bundle.
 */
export interface ModelAnswer {
  status: number;
  /** Lower-case names, as Node gives them. */
  headers: Record<string, string | string[] | undefined>;
  /** The body, decoded when it was compressed. */
  bytes: Buffer;
  /**
   * Set when the body could not be read whole (the connection broke after the headers): the
   * status and headers stand, and reading the body fails with this, as it does through fetch.
   */
  bodyError?: unknown;
}

/**
 * Sends the request and reads the whole answer. Rejects as fetch would: with the signal's reason
 * (an AbortError) when aborted, and with `TypeError('fetch failed', { cause })` when the vendor
 * cannot be reached or the answer cannot be read, so the AI SDK reports a replayed failure as it
 * reports its own (ai-sdk-gateway.ts hands failures to the SDK to report).
 */
export type ModelTransport = (
  url: string,
  init: { headers: Record<string, string>; body: string; signal: AbortSignal },
) => Promise<ModelAnswer>;

/** The transport over the global fetch (what a Lambda uses: the runtime's own, no extra bundle). */
export const fetchTransport: ModelTransport = async (url, { headers, body, signal }) => {
  const res = await fetch(url, { method: 'POST', headers, body, signal });
  let bytes: Buffer = Buffer.alloc(0);
  let bodyError: unknown;
  try {
    bytes = Buffer.from(await res.arrayBuffer());
  } catch (error) {
    if (signal.aborted) throw error;
    bodyError = error;
  }
  const answerHeaders: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    answerHeaders[name] = value;
  });
  // fetch has decoded a compressed body: its encoding and length are no longer the header's.
  delete answerHeaders['content-encoding'];
  delete answerHeaders['content-length'];
  return {
    status: res.status,
    headers: answerHeaders,
    bytes,
    ...(bodyError === undefined ? {} : { bodyError }),
  };
};

/** The answer as a fetch Response, for the AI SDK (which reads answers through fetch). */
export function answerResponse(answer: ModelAnswer): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  // A Response may carry no body for these statuses (the constructor throws).
  const empty = answer.status === 204 || answer.status === 205 || answer.status === 304;
  if (answer.bodyError !== undefined && !empty) {
    const failure = answer.bodyError;
    const broken = new ReadableStream({ start: (controller) => controller.error(failure) });
    return new Response(broken, { status: answer.status, headers });
  }
  return new Response(empty ? null : answer.bytes, { status: answer.status, headers });
}

/** Request headers as fetch may be given them, as a plain record (a copy: the caller may keep it). */
export function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  if (!headers) return {};
  if (headers instanceof Headers) return Object.fromEntries(headers);
  if (Array.isArray(headers)) return Object.fromEntries(headers);
  return { ...(headers as Record<string, string>) };
}
