import type { CoreDeps } from '../../ports/core-deps.ts';
import type { Warning } from '../agents/manifest.ts';
import { jsonOf, loadPayloadJson, type PayloadRef, payloadKey, storePayload } from './payload-store.ts';

/**
 * Outputs too large to answer inline are answered with a download URL, on both deployments alike.
 *
 * The bound is AWS's: a Lambda's synchronous response is at most 6 MB (6,291,456 bytes) of the
 * function's result, a JSON object whose `body` is the answer as a string, so the answer's JSON is
 * escaped once more inside it: every `"` and `\` of the answer costs two bytes there (a 3.9 MB
 * output of quotes is 7.8 MB of JSON and 15.6 MB in the response). An output is answered inline
 * when its JSON, counted that way (answerBytes), is at most INLINE_OUTPUT_BYTES: the 6 MB less a
 * margin for the rest of the answer (envelope, warnings, metadata, headers). No base64 margin: the
 * platform's answers are text, never base64-encoded. Measured in core, so `npm start` answers the
 * same output the same way.
 */
export const LAMBDA_RESPONSE_BYTES = 6 * 1024 * 1024;
export const ANSWER_MARGIN_BYTES = 256 * 1024;
export const INLINE_OUTPUT_BYTES = LAMBDA_RESPONSE_BYTES - ANSWER_MARGIN_BYTES;

/** How long a download URL works (and a call's stored output is kept): one hour. */
export const OUTPUT_URL_SECONDS = 3600;

/** The warning code of a call answered with a download URL instead of its data. */
export const OUTPUT_AS_URL = 'OUTPUT_AS_URL';

/** What stands in for an output answered by URL: `data` of a call, `output` of a run. */
export interface OutputLink {
  [key: string]: string | number;
  /** GET it (no API key: the URL is the credential) for the output's JSON, byte for byte. */
  output_url: string;
  output_bytes: number;
  output_sha256: string;
  /** When the URL stops working (403 after it). */
  expires_at: string;
}

/** The bytes an answer's JSON takes inside a Lambda response: each `"` and `\` escaped again. */
export function answerBytes(json: string, bytes: number): number {
  let escapes = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 34 || c === 92) escapes++;
  }
  return bytes + escapes;
}

/** Whether JSON of this many bytes fits inline (the scan only when escapes could decide it). */
export function fitsInline(json: string, bytes: number): boolean {
  if (bytes * 2 <= INLINE_OUTPUT_BYTES) return true;
  if (bytes > INLINE_OUTPUT_BYTES) return false;
  return answerBytes(json, bytes) <= INLINE_OUTPUT_BYTES;
}

/** A fresh download URL of a stored output. */
export async function outputLink(deps: CoreDeps, ref: PayloadRef): Promise<OutputLink> {
  const url = await deps.bundles.shareUrl(ref.key, OUTPUT_URL_SECONDS);
  return {
    output_url: url,
    output_bytes: ref.bytes,
    output_sha256: ref.sha256,
    expires_at: new Date(deps.clock.now().getTime() + OUTPUT_URL_SECONDS * 1000).toISOString(),
  };
}

export function outputAsUrlWarning(link: OutputLink): Warning {
  return {
    code: OUTPUT_AS_URL,
    message: `The output (${link.output_bytes} bytes of JSON) is too large to answer inline (${INLINE_OUTPUT_BYTES} bytes as answered, quotes and backslashes counting twice); data.output_url serves it until ${link.expires_at}`,
  };
}

/**
 * A call's data as answered: itself when it fits, else stored for the URL's lifetime (swept after)
 * and answered as an OutputLink with the OUTPUT_AS_URL warning.
 */
export async function answerCallOutput(
  deps: CoreDeps,
  requestId: string,
  data: Record<string, unknown>,
): Promise<{ data: Record<string, unknown>; warnings: Warning[] }> {
  const { json, bytes } = jsonOf(data);
  if (fitsInline(json, bytes)) return { data, warnings: [] };
  const keepUntil = deps.clock.now().getTime() + OUTPUT_URL_SECONDS * 1000;
  // Named by the request id (an operator finds it from the call's record), made key-safe.
  const id = requestId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 200);
  const ref = await storePayload(deps, payloadKey('call-outputs', id), json, keepUntil);
  const link = await outputLink(deps, ref);
  return { data: link, warnings: [outputAsUrlWarning(link)] };
}

/**
 * A stored output as answered: read back when it fits, else linked (`linked` true). `json`: the
 * stored JSON when the caller still holds it (the run that just stored it), saving the read.
 */
export async function answerStoredOutput(
  deps: CoreDeps,
  ref: PayloadRef,
  held?: string,
): Promise<{ output: Record<string, unknown>; linked: boolean }> {
  if (ref.bytes > INLINE_OUTPUT_BYTES) return { output: await outputLink(deps, ref), linked: true };
  const json = held ?? (await loadPayloadJson(deps, ref));
  if (!fitsInline(json, ref.bytes)) return { output: await outputLink(deps, ref), linked: true };
  return { output: JSON.parse(json) as Record<string, unknown>, linked: false };
}
