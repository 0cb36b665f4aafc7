/*
 * The run statuses as plain values, apart from the run's zod schema: the CLI names them in its
 * options (`agenthost runs list --status`) without loading zod at start (docs/performance.md).
 */

export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'timed_out', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
