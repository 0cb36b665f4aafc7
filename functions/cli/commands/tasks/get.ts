/** `agenthost tasks get`: show one task. */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { showTask } from './task-view.ts';

export function registerTaskGet(tasks: Command, cli: CliRuntime): void {
  tasks
    .command('get')
    .description('Show one task')
    .argument('<id>', 'the task’s id')
    .addHelpText('after', ['', 'Example:', '  agenthost tasks get TASK_ID --json'].join('\n'))
    .action(cli.action(async (ctx, id: string) => showTask(ctx, await (await ctx.client()).tasks.get(id))));
}
