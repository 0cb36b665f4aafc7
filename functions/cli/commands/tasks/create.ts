/** `agenthost tasks create`: create a task in the workspace. */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { type Priority, priorityOption, type Status, showTask, statusOption } from './task-view.ts';

export function registerTaskCreate(tasks: Command, cli: CliRuntime): void {
  tasks
    .command('create')
    .description('Create a task in the workspace')
    .argument('<title>', 'what is to be done')
    .option('--description <text>', 'more detail')
    .option('--due <date>', 'the due date, YYYY-MM-DD')
    .option('--project <project>', 'a project name to group tasks by')
    .addOption(priorityOption('its priority (default normal)'))
    .addOption(statusOption('its status (default open)'))
    .addHelpText(
      'after',
      '\nExample:\n  agenthost tasks create "Review the Q3 report" --due 2026-07-01 --priority high',
    )
    .action(
      cli.action(
        async (
          ctx,
          title: string,
          opts: {
            description?: string;
            due?: string;
            project?: string;
            priority?: Priority;
            status?: Status;
          },
        ) => {
          const client = await ctx.client();
          const workspace_id = await ctx.workspace(client);
          const task = await client.tasks.create({
            title,
            workspace_id,
            ...(opts.description !== undefined ? { description: opts.description } : {}),
            ...(opts.due !== undefined ? { due_date: opts.due } : {}),
            ...(opts.project !== undefined ? { project: opts.project } : {}),
            ...(opts.priority ? { priority: opts.priority } : {}),
            ...(opts.status ? { status: opts.status } : {}),
          });
          showTask(ctx, task);
        },
      ),
    );
}
