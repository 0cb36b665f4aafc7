import { createHmac } from 'node:crypto';

/*
 * A run webhook's signature header (docs/runs.md, "Told when it ends"), Stripe's scheme:
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. The timestamp is signed with the body, so
 * a receiver that refuses an old `t` cannot be sent a captured delivery again later. The SDK's
 * verifyWebhook (sdk/src/webhooks.ts) checks it.
 */

export const SIGNATURE_HEADER = 'X-Platform-Signature';

/** The header's value for `body`, signed at `unixSeconds` with `secret`. */
export function signatureHeader(secret: string, unixSeconds: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}
