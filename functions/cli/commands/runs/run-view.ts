/** What the `agenthost runs` commands share. */
import type { CliContext, Client } from '../../cli-context.ts';
import { printRecord } from '../../cli-output.ts';

export type Run = Awaited<ReturnType<Client['runs']['list']>>['runs'][number];

export const runColumns = [
  { header: 'ID', value: (r: Run) => r.run_id },
  { header: 'STATUS', value: (r: Run) => r.status },
  { header: 'AGENT', value: (r: Run) => r.agent },
  { header: 'CREATED', value: (r: Run) => r.created_at },
  { header: 'DURATION MS', value: (r: Run) => r.duration_ms },
];

/** A run as lines for people (its result's body with --json, or `runs get … --json | jq .result`). */
export function showRun(ctx: CliContext, r: Run): void {
  printRecord(ctx, r, [
    ['id', r.run_id],
    ['status', r.status],
    ['agent', r.agent],
    ['request', r.request_id],
    ['trace', r.trace_id],
    ['created', r.created_at],
    ['started', r.started_at],
    ['ended', r.ended_at],
    ['duration ms', r.duration_ms],
    ['deadline', r.deadline_at],
    ['cancel requested', r.cancel_requested_at],
    ['result', r.result ? `${r.result.status} ${errorCode(r.result.body) ?? 'ok'}` : null],
  ]);
}

function errorCode(body: Record<string, unknown>): string | undefined {
  const error = body.error as { code?: unknown } | undefined;
  return typeof error?.code === 'string' ? error.code : undefined;
}
