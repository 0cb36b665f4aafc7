import type { CoreDeps } from '../../ports/core-deps.ts';
import type { RunSteps } from '../../ports/run-steps.ts';
import {
  ITEM_PAYLOAD_BYTES,
  loadPayloadJson,
  type PayloadRef,
  payloadKey,
  storePayload,
} from '../payloads/payload-store.ts';

/*
 * A step's outcome as its record holds it: its JSON, or, over ITEM_PAYLOAD_BYTES (a working
 * directory's snapshot, up to 8 MiB), a reference to it in the bundle store, where a store item
 * (400 KB) or a durable checkpoint (256 KB) could not hold it. What a step answers is its outcome
 * through JSON, on its first run as on a replay, so that both go on alike.
 */

export interface EncodedOutcome {
  json?: string;
  ref?: PayloadRef;
}

/** `outcome` as a step's record holds it (a large one stored until `keepUntilMs`). */
export async function encodeOutcome(
  deps: CoreDeps,
  where: { runId: string; name: string; keepUntilMs: number },
  outcome: unknown,
): Promise<{ json: string; encoded: EncodedOutcome }> {
  const json = JSON.stringify(outcome ?? null);
  if (Buffer.byteLength(json) <= ITEM_PAYLOAD_BYTES) return { json, encoded: { json } };
  const key = payloadKey('run-steps', where.runId, Buffer.from(where.name).toString('base64url'));
  return { json, encoded: { ref: await storePayload(deps, key, json, where.keepUntilMs) } };
}

/** The outcome a step's record holds, parsed. */
export async function decodeOutcome<T>(deps: CoreDeps, encoded: EncodedOutcome): Promise<T> {
  const json = encoded.json ?? (encoded.ref ? await loadPayloadJson(deps, encoded.ref) : 'null');
  return JSON.parse(json) as T;
}

/**
 * `engine`'s steps, each outcome recorded encoded (large ones in the bundle store): for an engine
 * whose records are small (a durable function's checkpoints: adapters/aws/durable-run-steps.ts).
 */
export function withLargeOutcomes(
  deps: CoreDeps,
  engine: RunSteps,
  runId: string,
  keepUntilMs: number,
): RunSteps {
  return {
    async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
      const encoded = await engine.step<EncodedOutcome>(name, async () => {
        return (await encodeOutcome(deps, { runId, name, keepUntilMs }, await fn())).encoded;
      });
      return decodeOutcome<T>(deps, encoded);
    },
  };
}
