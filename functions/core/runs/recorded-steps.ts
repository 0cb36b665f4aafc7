import type { CoreDeps } from '../../ports/core-deps.ts';
import type { RunRecorder, RunSteps } from '../../ports/run-steps.ts';
import { cond, queryAll } from '../../ports/store.ts';
import { ITEM_PAYLOAD_BYTES, loadPayloadJson, payloadKey, storePayload } from '../payloads/payload-store.ts';
import { openRunEntity, openRunKeys } from './open-run-record.ts';
import { runStepEntity, runStepKeys } from './run-step-record.ts';

/**
 * The platform's own RunRecorder (ports/run-steps.ts), over the store: what the local platform
 * carries runs on with after a restart (edge/run-resume.ts). On AWS that is to be the durable
 * engine's (docs/decisions.md, "Long runs").
 */
export function storeRunRecorder(deps: CoreDeps): RunRecorder {
  return {
    steps: (runId, keepUntilMs, options) => recordedSteps(deps, runId, keepUntilMs, options),
    async opened(run) {
      await deps.store.put(openRunEntity.toItem(run));
    },
    async ended(run) {
      await deps.store.delete({ pk: openRunKeys.all(), sk: openRunKeys.sk(run.run_id) });
      // Its steps hold its input, its model's answers and its tools' results: once it has ended
      // nothing carries it on, so they go now, not with their expiry (large ones: the sweep's).
      const steps = await queryAll(deps.store, { pk: runStepKeys.ofRun(run.run_id) });
      await Promise.all(steps.map((item) => deps.store.delete({ pk: item.pk, sk: item.sk })));
    },
    async unended() {
      const items = await queryAll(deps.store, { pk: openRunKeys.all() });
      return items.map((item) => openRunEntity.fromItem(item));
    },
  };
}

/**
 * A run's steps over the store: those it finished read once, at the start of a (re)play, and each
 * new one written as it finishes. One process runs a run at a time (the one that started it, or
 * the one that carried it on), so a step is written once, with `notExists`: a second writer is a
 * fault, not a race to settle. An outcome over ITEM_PAYLOAD_BYTES of JSON goes to the bundle store.
 */
export async function recordedSteps(
  deps: CoreDeps,
  runId: string,
  keepUntilMs: number,
  { fresh = false }: { fresh?: boolean } = {},
): Promise<RunSteps> {
  const items = fresh ? [] : await queryAll(deps.store, { pk: runStepKeys.ofRun(runId) });
  const finished = new Map<string, unknown>();
  await Promise.all(
    items.map(async (item) => {
      const step = runStepEntity.fromItem(item);
      const json =
        step.outcome ?? (step.outcome_ref ? await loadPayloadJson(deps, step.outcome_ref) : 'null');
      finished.set(step.name, JSON.parse(json));
    }),
  );
  return {
    async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
      if (finished.has(name)) return finished.get(name) as T;
      const outcome = await fn();
      // What a replay answers is the outcome through JSON: so does this run, to go on alike.
      const json = JSON.stringify(outcome ?? null);
      const large = Buffer.byteLength(json) > ITEM_PAYLOAD_BYTES;
      const key = payloadKey('run-steps', runId, Buffer.from(name).toString('base64url'));
      const ref = large ? await storePayload(deps, key, json, keepUntilMs) : undefined;
      await deps.store.put(
        runStepEntity.toItem({
          run_id: runId,
          name,
          outcome: large ? null : json,
          ...(ref ? { outcome_ref: ref } : {}),
          expires_ms: keepUntilMs,
        }),
        { condition: cond.notExists() },
      );
      const parsed = JSON.parse(json) as T;
      finished.set(name, parsed);
      return parsed;
    },
  };
}
