import type { CoreDeps } from '../../ports/core-deps.ts';
import { type Item, queryAll } from '../../ports/store.ts';

/**
 * How stored payloads (payload-store.ts) are deleted: each has a sweep entry, written before it,
 * due when its record expires (a run's: its TTL, HISTORY_DAYS after it started) or when its
 * download link does (a call's output). Housekeeping (every minute locally, every five minutes in
 * AWS) deletes the payloads past due, then their entries. A record read after its TTL is absent on
 * both stores (ports/store.ts), so nothing can still point at a swept payload. The same code on both
 * deployments; listing is a Query on GSI2, never a Scan (as the in-flight runs').
 */
const DUE_PARTITION = 'PAYLOADS#DUE';

const dueKey = (ms: number) => String(Math.max(0, Math.floor(ms))).padStart(15, '0');

export function payloadSweepItem(key: string, dueMs: number): Item {
  return {
    pk: `PAYLOAD#${key}`,
    sk: 'SWEEP',
    key,
    due_ms: dueMs,
    gsi2pk: DUE_PARTITION,
    gsi2sk: `${dueKey(dueMs)}#${key}`,
  };
}

/** Deletes every payload past due and its entry; a failed deletion is retried at the next pass. */
export async function sweepDuePayloads(deps: CoreDeps): Promise<{ swept: number }> {
  const now = deps.clock.now().getTime();
  const due = await queryAll(deps.store, {
    index: 'gsi2',
    pk: DUE_PARTITION,
    sk: { lt: `${dueKey(now)}#~` },
  });
  let swept = 0;
  for (const item of due) {
    const key = String(item.key);
    try {
      await deps.bundles.delete(key);
      await deps.store.delete({ pk: item.pk, sk: item.sk });
      swept++;
    } catch (err) {
      deps.logger.warn('stored payload not swept', { key, error: String(err) });
    }
  }
  return { swept };
}
