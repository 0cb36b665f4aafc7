/** `agenthost tasks update`: change some of a task’s fields; --no-due, --no-project, --no-description clear one. */
import type { Command } from 'commander';
import { CliError, EXIT } from '../../cli-errors.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { type Priority, priorityOption, type Status, showTask, statusOption } from './task-view.ts';

interface UpdateFlags {
  title?: string;
  /** A string to set, or false for --no-… (clear). */
  description?: string | false;
  due?: string | false;
  project?: string | false;
  status?: Status;
  priority?: Priority;
}

export function registerTaskUpdate(tasks: Command, cli: CliRuntime): void {
  tasks
    .command('update')
    .description('Change some of a task’s fields; --no-due, --no-project, --no-description clear one')
    .argument('<id>', 'the task’s id')
    .option('--title <title>', 'a new title')
    .option('--description <text>', 'a new description')
    .option('--no-description', 'clear the description')
    .option('--due <date>', 'a new due date, YYYY-MM-DD')
    .option('--no-due', 'clear the due date')
    .option('--project <project>', 'a new project')
    .option('--no-project', 'clear the project')
    .addOption(statusOption('a new status'))
    .addOption(priorityOption('a new priority'))
    .addHelpText('after', '\nExample:\n  agenthost tasks update TASK_ID --status in_progress --no-due')
    .action(
      cli.action(async (ctx, id: string, opts: UpdateFlags) => {
        const cleared = (v: string | false | undefined) => (v === false ? null : v);
        const body = {
          ...(opts.title !== undefined ? { title: opts.title } : {}),
          ...(opts.description !== undefined ? { description: cleared(opts.description) } : {}),
          ...(opts.due !== undefined ? { due_date: cleared(opts.due) } : {}),
          ...(opts.project !== undefined ? { project: cleared(opts.project) } : {}),
          ...(opts.status ? { status: opts.status } : {}),
          ...(opts.priority ? { priority: opts.priority } : {}),
        };
        if (Object.keys(body).length === 0)
          throw new CliError(
            'nothing to change',
            EXIT.usage,
            'give at least one of --title, --description, --due, --project, --status, --priority (or --no-…)',
          );
        showTask(ctx, await (await ctx.client()).tasks.update(id, body));
      }),
    );
}
