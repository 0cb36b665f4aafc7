import { callRunEntity } from '../../functions/core/runs/call-run-record.ts';
import type { Store } from '../../functions/ports/store.ts';

/**
 * Writes a run record as a process that went away leaves it: `running`, never ended, started at
 * `startedMs` with its deadline at `deadlineMs` (epoch ms). What the runs tests read back as
 * interrupted, or cancel with no process left to stop it.
 */
export async function putStrandedRun(
  store: Store,
  run: {
    runId: string;
    accountId: string;
    agent: string;
    requestId: string;
    startedMs: number;
    deadlineMs: number;
  },
): Promise<void> {
  const started = new Date(run.startedMs).toISOString();
  await store.put(
    callRunEntity.toItem({
      run_id: run.runId,
      account_id: run.accountId,
      key_id: 'key',
      agent_id: 'agent',
      agent: run.agent,
      workspace_id: 'ws',
      endpoint: 'run',
      status: 'running',
      request_id: run.requestId,
      trace_id: null,
      created_at: started,
      started_at: started,
      ended_at: null,
      deadline_at: new Date(run.deadlineMs).toISOString(),
      result_status: null,
      result_body: null,
      cancel_requested_at: null,
      webhook_url: null,
    }),
  );
}
