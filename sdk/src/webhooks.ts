/*
 * Checking a run's completion webhook (docs/runs.md, "Told when it ends") on the receiving side.
 * The platform signs each delivery as Stripe signs its events: the header
 * `X-Platform-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed with the
 * account's webhook signing secret (`whsec_…`, POST /api-keys/webhook-secret). Web Crypto, not
 * node:crypto, so the package still runs in a browser's bundle (the dashboard's).
 */

/** The header a run webhook's signature comes in (lower case, as Node's `req.headers` keys it). */
export const WEBHOOK_SIGNATURE_HEADER = 'x-platform-signature';

/** How old a signature may be by default: five minutes, as Stripe's libraries allow. */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

const encoder = new TextEncoder();

/**
 * Whether `body` (the request body exactly as received, before any JSON parsing) was signed with
 * `secret` in `header` no more than `toleranceSeconds` from `now` (epoch ms) either way. Any `v1`
 * of the header may match. The MAC is compared in constant time, so a forger learns nothing from
 * how long a refusal took. A receiver that also remembers the `t` and run id it took refuses a
 * delivery sent again within the tolerance too.
 */
export async function verifyWebhook(
  secret: string,
  header: string | null | undefined,
  body: string | Uint8Array,
  toleranceSeconds: number = DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  now: number = Date.now(),
): Promise<boolean> {
  const parsed = parseSignature(header);
  if (!parsed) return false;
  if (Math.abs(now / 1000 - parsed.t) > toleranceSeconds) return false;
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  const signed = new Uint8Array(parsed.tText.length + 1 + bytes.length);
  signed.set(encoder.encode(`${parsed.tText}.`), 0);
  signed.set(bytes, parsed.tText.length + 1);
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const expected = new Uint8Array(await crypto.subtle.sign('HMAC', key, signed));
  let matched = false;
  // Every candidate is compared in full, so the time taken does not say which one matched.
  for (const candidate of parsed.v1) matched = equalInConstantTime(expected, candidate) || matched;
  return matched;
}

/** `t=…,v1=…[,v1=…]` as its parts; null when it is not that. Unknown schemes (`v0=`) are skipped. */
function parseSignature(
  header: string | null | undefined,
): { t: number; tText: string; v1: Uint8Array[] } | null {
  if (!header) return null;
  let tText: string | undefined;
  const v1: Uint8Array[] = [];
  for (const part of header.split(',')) {
    const [name, value] = part.trim().split('=', 2) as [string, string | undefined];
    if (name === 't' && value !== undefined && /^[0-9]{1,12}$/.test(value)) tText = value;
    else if (name === 'v1' && value !== undefined && /^[0-9a-f]{64}$/.test(value)) v1.push(fromHex(value));
  }
  if (tText === undefined || v1.length === 0) return null;
  return { t: Number(tText), tText, v1 };
}

function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Equal bytes, looked at whole whatever differs first. */
function equalInConstantTime(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}
