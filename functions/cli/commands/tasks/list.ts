/** `agenthost tasks list`: list the workspace’s tasks, newest first, filtered as the flags say. */
import type { Command } from 'commander';
import { CliError, EXIT } from '../../cli-errors.ts';
import { printList } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { intArg } from '../../option-parsers.ts';
import {
  type Priority,
  priorityOption,
  type Status,
  statusOption,
  type Task,
  taskColumns,
} from './task-view.ts';

export function registerTaskList(tasks: Command, cli: CliRuntime): void {
  tasks
    .command('list')
    .description('List the workspace’s tasks, newest first, filtered as the flags say')
    .addOption(statusOption('only tasks with this status'))
    .addOption(priorityOption('only tasks with this priority'))
    .option('--project <project>', 'only tasks of this project')
    .option('--overdue', 'only open tasks whose due date has passed')
    .option('--limit <n>', 'tasks per page, 1-200 (default 50)', intArg(1, 200))
    .option('--offset <n>', 'skip this many matches first', intArg(0, 1_000_000))
    .option('--all', 'every page, not only the first')
    .addHelpText('after', '\nExample:\n  agenthost tasks list --status open --project launch --all')
    .action(
      cli.action(
        async (
          ctx,
          opts: {
            status?: Status;
            priority?: Priority;
            project?: string;
            overdue?: boolean;
            limit?: number;
            offset?: number;
            all?: boolean;
          },
        ) => {
          const limit = opts.limit;
          const offset = opts.offset;
          if (opts.all && offset !== undefined)
            throw new CliError('--all lists every task; it takes no --offset', EXIT.usage);
          const client = await ctx.client();
          const workspace_id = await ctx.workspace(client);
          const filters = {
            workspace_id,
            ...(opts.status ? { status: opts.status } : {}),
            ...(opts.priority ? { priority: opts.priority } : {}),
            ...(opts.project !== undefined ? { project: opts.project } : {}),
            ...(opts.overdue ? { overdue: 'true' as const } : {}),
          };
          if (opts.all) {
            const all: Task[] = [];
            for await (const t of client.tasks.iterate(filters, limit ?? 200)) all.push(t);
            printList(ctx, { tasks: all, total: all.length }, all, taskColumns, 'no tasks');
            return;
          }
          const page = await client.tasks.list({
            ...filters,
            ...(limit !== undefined ? { limit } : {}),
            ...(offset !== undefined ? { offset } : {}),
          });
          printList(ctx, page, page.tasks, taskColumns, 'no tasks');
          const shown = (offset ?? 0) + page.tasks.length;
          if (!ctx.json && page.total > shown)
            ctx.note(`(${page.total} in all: --all to list every one, or --offset ${shown})`);
        },
      ),
    );
}
