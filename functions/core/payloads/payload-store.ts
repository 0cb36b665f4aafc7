import { createHash } from 'node:crypto';
import * as z from 'zod';
import { BUNDLE_KEY_PREFIX } from '../../ports/bundle-store.ts';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { payloadSweepItem } from './payload-sweep.ts';

/**
 * Large values, stored the way DynamoDB applications store them: a record keeps a payload (a
 * run's output) itself up to ITEM_PAYLOAD_BYTES of JSON, and a larger one goes to the bundle
 * store (S3 in AWS, files locally) behind a PayloadRef in the record, read back by the routes
 * that answer it (docs/data-model.md, "Large values").
 *
 * Why 64 KiB, not DynamoDB's 400 KB item limit: that limit counts the whole item (attribute names,
 * keys, indexes, the other fields), a webhook's idempotency item holds a copy of its run, and a
 * transaction's items share its 4 MB; a Query reads at most 1 MB a page, so with 64 KiB records a
 * page of the run history still holds 15 of them; and a read costs one unit per 4 KB. The same
 * threshold on both stores, so a record is stored alike locally and in AWS.
 */
export const ITEM_PAYLOAD_BYTES = 64 * 1024;

/** Where a payload too large for its record is: its bundle-store key, size and digest. */
export const payloadRefSchema = z.object({
  key: z.string(),
  /** Bytes of the payload's JSON (UTF-8), as stored. */
  bytes: z.number().int(),
  sha256: z.string(),
});
export type PayloadRef = z.output<typeof payloadRefSchema>;

export type PayloadKind = 'run-outputs' | 'call-outputs' | 'run-steps';

/** `bundles/payloads/<kind>/<id>/…/<id>.json`; ids are UUIDs or request ids (bundle-key safe). */
export function payloadKey(kind: PayloadKind, ...ids: string[]): string {
  return `${BUNDLE_KEY_PREFIX}payloads/${kind}/${ids.join('/')}.json`;
}

/**
 * Stores a payload's JSON at `key`, to be deleted at `keepUntilMs` (platform clock) by the sweep
 * (payload-sweep.ts). The sweep's entry is written first, so no stored payload is ever without the
 * entry that deletes it, whatever fails after.
 */
export async function storePayload(
  deps: CoreDeps,
  key: string,
  json: string,
  keepUntilMs: number,
): Promise<PayloadRef> {
  const data = Buffer.from(json, 'utf8');
  const sha256 = createHash('sha256').update(data).digest('hex');
  await deps.store.put(payloadSweepItem(key, keepUntilMs));
  await deps.bundles.put(key, data, { contentType: 'application/json', sha256 });
  return { key, bytes: data.length, sha256 };
}

/** A stored payload's JSON. Missing (swept, or never written) is a platform fault, not input. */
export async function loadPayloadJson(deps: CoreDeps, ref: PayloadRef): Promise<string> {
  const data = await deps.bundles.get(ref.key);
  if (!data) throw new Error(`Stored payload ${ref.key} is missing from the bundle store`);
  return data.toString('utf8');
}

/** The JSON of a value and its size in bytes (UTF-8), as a record or an answer would hold it. */
export function jsonOf(value: unknown): { json: string; bytes: number } {
  const json = JSON.stringify(value) ?? 'null';
  return { json, bytes: Buffer.byteLength(json, 'utf8') };
}
