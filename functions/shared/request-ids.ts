import * as crypto from 'node:crypto';

/**
 * A new request id, `req_<uuid>`, whose UUID is version 7 (RFC 9562): its first 48 bits are the
 * time in milliseconds, the rest random. Ids made one after another sort one after another, so an
 * index keyed by them grows at its end: the embedded store finds a call's trace by its request id
 * (GSI2), and with random ids each call's entry went to a page of its own in the index, written
 * with the commit (docs/traces.md, "Cost"). Minted on AWS too (http/lambda-shell.ts): there the
 * time it carries finds the call's record, so the line needs no index entry (a write less).
 */
export function newRequestId(): string {
  return `req_${nodeUuidV7 ? nodeUuidV7() : builtUuidV7()}`;
}

/** Node's own, from 24.16 (the project's Node; the engines range starts at 22, which lacks it). */
const nodeUuidV7 = (crypto as { randomUUIDv7?: () => string }).randomUUIDv7;

/** A version 7 UUID built here: the time, then a v4 UUID's random bits (its variant bits are v7's). */
export function builtUuidV7(now = Date.now()): string {
  const time = now.toString(16).padStart(12, '0');
  const random = crypto.randomUUID();
  return `${time.slice(0, 8)}-${time.slice(8)}-7${random.slice(15)}`;
}

const UUID_V7_ID = /^req_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * The time (epoch ms) a request id minted by newRequestId carries, or undefined for an id of
 * another shape (a schedule run's, or API Gateway's of an earlier build). The call's record is
 * keyed by its time and request id, so a call whose time is its id's can be found from the id
 * alone (docs/traces.md, "Where a trace is").
 */
export function requestIdTime(requestId: string): number | undefined {
  return UUID_V7_ID.test(requestId) ? mintedRequestIdTime(requestId) : undefined;
}

/**
 * The time of a request id already known to be minted by newRequestId (its trace is named by it:
 * traceIdOfRequestId), without checking its shape again: a call's trace reads it as it is stored.
 */
export function mintedRequestIdTime(requestId: string): number {
  return Number.parseInt(requestId.slice(4, 12), 16) * 0x10000 + Number.parseInt(requestId.slice(13, 17), 16);
}

/**
 * The trace id of a call that starts a trace, from its request id when the platform minted it: the
 * UUID's 32 hex digits (W3C's trace id is 16 bytes, lowercase hex, not all zero; a version 7 UUID's
 * last 62 bits are random). The call's stored trace then need not say it: it is read back from the
 * request id (docs/traces.md, "Cost"). Undefined for an id of another shape.
 */
export function traceIdOfRequestId(requestId: string): string | undefined {
  if (!UUID_V7_ID.test(requestId)) return undefined;
  // req_xxxxxxxx-xxxx-7xxx-xxxx-xxxxxxxxxxxx: the four dashes at fixed places.
  return (
    requestId.slice(4, 12) +
    requestId.slice(13, 17) +
    requestId.slice(18, 22) +
    requestId.slice(23, 27) +
    requestId.slice(28)
  );
}
