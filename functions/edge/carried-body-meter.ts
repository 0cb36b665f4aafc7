import { EVENT_BODY_BYTES } from '../shared/byte-limits.ts';
import { bodyTooLarge, type PlatformError } from '../shared/errors.ts';
import { carriedAsBase64 } from './binary-media-types.ts';
import { eventBodyTooLarge } from './event-body-budget.ts';

/*
 * A body counted as AWS's Lambda event would carry it, as the edge reads it (edge/serve-route.ts),
 * on both deployments: the budget and why are in event-body-budget.ts.
 */

/** A body of at most this many raw bytes always fits, whatever it holds (six bytes per byte at worst). */
const ALWAYS_FITS_BYTES = Math.floor(EVENT_BODY_BYTES / 6);

/** The bytes `n` raw bytes take as base64. */
export function base64Bytes(n: number): number {
  return 4 * Math.ceil(n / 3);
}

/** The extra bytes JSON string escaping adds to these bytes of text. */
function escapeExtra(chunk: Buffer): number {
  let extra = 0;
  for (let i = 0; i < chunk.length; i++) {
    const b = chunk[i] as number;
    if (b === 0x22 || b === 0x5c || b === 0x08 || b === 0x09 || b === 0x0a || b === 0x0c || b === 0x0d)
      extra += 1;
    else if (b < 0x20) extra += 5;
  }
  return extra;
}

/**
 * Counts a body as it is read, as the event would carry it. Text is scanned only when it could
 * matter: a declared length that always fits is never scanned.
 */
export class CarriedBodyMeter {
  private raw = 0;
  private extra = 0;
  private readonly scan: boolean;
  private readonly base64: boolean;
  constructor(base64: boolean, declaredLength: number | undefined) {
    this.base64 = base64;
    this.scan = !base64 && !(declaredLength !== undefined && declaredLength <= ALWAYS_FITS_BYTES);
  }

  /** Adds a chunk; false once the body no longer fits the event. */
  add(chunk: Buffer): boolean {
    this.raw += chunk.length;
    if (this.scan) this.extra += escapeExtra(chunk);
    return this.bytes <= EVENT_BODY_BYTES;
  }

  get bytes(): number {
    return this.base64 ? base64Bytes(this.raw) : this.raw + this.extra;
  }
}

/**
 * Whether a declared length alone is past the budget (refused before a byte is read, as API
 * Gateway refuses it).
 */
export function declaredOverEventBudget(declaredLength: number, base64: boolean): boolean {
  return (base64 ? base64Bytes(declaredLength) : declaredLength) > EVENT_BODY_BYTES;
}

/**
 * How the edge sizes one request's body under a route's `limit`: the refusal its declared length
 * alone earns (AWS's answer past the event budget, whatever the route's limit; else the route's), a
 * meter to count it as it is read, and the refusal for what reading found.
 */
export function bodySizing(
  contentLength: string | undefined,
  contentType: string | undefined,
  limit: number,
) {
  const declared = contentLength === undefined ? undefined : Number(contentLength);
  const base64 = carriedAsBase64(contentType);
  const declaredRefusal =
    declared === undefined
      ? undefined
      : declaredOverEventBudget(declared, base64)
        ? eventBodyTooLarge()
        : declared > limit
          ? bodyTooLarge(limit)
          : undefined;
  return {
    declaredRefusal,
    meter: () => new CarriedBodyMeter(base64, declared),
    refusal: (failure: 'too-large' | 'too-large-event'): PlatformError =>
      failure === 'too-large' ? bodyTooLarge(limit) : eventBodyTooLarge(),
  };
}
