/** `agenthost tasks complete`: mark a task done (its completion time is kept if it was done already). */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { showTask } from './task-view.ts';

export function registerTaskComplete(tasks: Command, cli: CliRuntime): void {
  tasks
    .command('complete')
    .description('Mark a task done (its completion time is kept if it was done already)')
    .argument('<id>', 'the task’s id')
    .addHelpText('after', ['', 'Example:', '  agenthost tasks complete TASK_ID'].join('\n'))
    .action(
      cli.action(async (ctx, id: string) => showTask(ctx, await (await ctx.client()).tasks.complete(id))),
    );
}
