import * as z from 'zod';
import { defineEntity } from '../entity.ts';

/*
 * A run opened and not yet ended, on a platform that carries runs on after a restart (the local
 * one: recorded-steps.ts): what a restarted process reads to find them, without a scan of every
 * account's runs. Written when the run is written, deleted when it ends; one that is never deleted
 * (its process went away for good) expires a day after the run's deadline.
 */

const openRunSchema = z.object({
  run_id: z.string(),
  account_id: z.string(),
  deadline_at: z.string(),
});

export const openRunKeys = {
  all: () => 'RUNS#OPEN',
  sk: (runId: string) => `RUN#${runId}`,
};

/** How long past its deadline an open run's entry is kept. */
export const OPEN_RUN_KEPT_PAST_DEADLINE_MS = 86_400_000;

export const openRunEntity = defineEntity({
  name: 'open run',
  keys: openRunKeys,
  schema: openRunSchema,
  locate: (record) => ({
    pk: openRunKeys.all(),
    sk: openRunKeys.sk(record.run_id),
    ttl: Math.floor((Date.parse(record.deadline_at) + OPEN_RUN_KEPT_PAST_DEADLINE_MS) / 1000),
  }),
});
