import * as z from 'zod';
import { defineEntity } from '../entity.ts';
import { payloadRefSchema } from '../payloads/payload-store.ts';

/*
 * A finished step of a run (ports/run-steps.ts) as the platform's own recorder keeps it
 * (recorded-steps.ts): its outcome's JSON, under the run, written once. A replay of the run reads
 * them all at its start. They are needed only while the run may be carried on: they expire with
 * the run's open entry (open-run-record.ts), a day after its deadline.
 */

const runStepSchema = z.object({
  run_id: z.string(),
  name: z.string(),
  /** The outcome's JSON, or null when it is in the bundle store behind `outcome_ref`. */
  outcome: z.string().nullable(),
  outcome_ref: payloadRefSchema.optional(),
  /** Expires then (epoch ms). */
  expires_ms: z.number().int(),
});

export type RunStep = z.output<typeof runStepSchema>;

export const runStepKeys = {
  ofRun: (runId: string) => `RUN#${runId}#STEPS`,
  sk: (name: string) => `STEP#${name}`,
};

export const runStepEntity = defineEntity({
  name: 'run step',
  keys: runStepKeys,
  schema: runStepSchema,
  locate: (record) => ({
    pk: runStepKeys.ofRun(record.run_id),
    sk: runStepKeys.sk(record.name),
    ttl: Math.floor(record.expires_ms / 1000),
  }),
});
