/**
 * The longest a run may last on any tier (docs/limits.md): an hour. What the run worker's durable
 * execution is sized by on AWS (lib/constructs/run-worker.ts), past a Lambda's 15 minutes.
 */
export const MAX_RUN_SECONDS = 3600;
