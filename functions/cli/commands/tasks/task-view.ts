/** What the `agenthost tasks` commands share. */
import { Option } from 'commander';
import { TASK_PRIORITIES, TASK_STATUSES } from '../../../core/tasks/task-names.ts';
import type { CliContext, Client } from '../../cli-context.ts';
import { printRecord } from '../../cli-output.ts';

export type Task = Awaited<ReturnType<Client['tasks']['list']>>['tasks'][number];
export type Status = (typeof TASK_STATUSES)[number];
export type Priority = (typeof TASK_PRIORITIES)[number];

export const taskColumns = [
  { header: 'ID', value: (t: Task) => t.id },
  { header: 'STATUS', value: (t: Task) => t.status },
  { header: 'PRIORITY', value: (t: Task) => t.priority },
  { header: 'DUE', value: (t: Task) => t.due_date },
  { header: 'PROJECT', value: (t: Task) => t.project },
  { header: 'TITLE', value: (t: Task) => t.title },
];

export function showTask(ctx: CliContext, t: Task): void {
  printRecord(ctx, t, [
    ['id', t.id],
    ['title', t.title],
    ['status', t.status],
    ['priority', t.priority],
    ['due', t.due_date],
    ['project', t.project],
    ['description', t.description],
    ['workspace', t.workspace_id],
    ['created by', t.created_by],
    ['created', t.created_at],
    ['updated', t.updated_at],
    ['completed', t.completed_at],
  ]);
}

export const statusOption = (what: string) => new Option('--status <status>', what).choices(TASK_STATUSES);
export const priorityOption = (what: string) =>
  new Option('--priority <priority>', what).choices(TASK_PRIORITIES);
