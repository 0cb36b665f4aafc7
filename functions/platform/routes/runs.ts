/*
 * The run routes: a call started with `Prefer: respond-async`, read back (docs/runs.md). Served by
 * the calls module, whose function runs the calls themselves.
 * Spread into the route table in functions/platform/routes.ts, whose order they keep.
 */

import { runIdParams, runListQuery, runListSchema, runSchema } from '../../core/runs/call-run-schemas.ts';
import { route } from './route-def.ts';

export const runRoutes = {
  listRuns: route({
    method: 'GET',
    path: '/runs',
    module: 'calls',
    auth: 'api-key',
    summary: 'List the caller’s runs, newest first, paged by cursor',
    description:
      'The runs the calling account started with `Prefer: respond-async`, newest first, one page at a time with `cursor`; `status` and `agent` narrow them (docs/runs.md). Runs are kept as long as call records, 90 days.',
    tag: 'Runs',
    query: runListQuery,
    success: { status: 200, schema: runListSchema, description: 'A page of runs' },
  }),
  getRun: route({
    method: 'GET',
    path: '/runs/{run_id}',
    module: 'calls',
    auth: 'api-key',
    summary: 'Get a run: its status, timing and, once it ended, the plain call’s answer',
    description:
      'A run the calling account started (any other account’s is 404): its status, its timing and, once it ended, `result`, the status and body the plain call would have answered (docs/runs.md).',
    tag: 'Runs',
    params: runIdParams,
    success: { status: 200, schema: runSchema, description: 'The run' },
  }),
} as const;
