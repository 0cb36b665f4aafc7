/** `agenthost tasks delete`: delete a task. */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';

export function registerTaskDelete(tasks: Command, cli: CliRuntime): void {
  tasks
    .command('delete')
    .description('Delete a task')
    .argument('<id>', 'the task’s id')
    .addHelpText('after', ['', 'Example:', '  agenthost tasks delete TASK_ID'].join('\n'))
    .action(
      cli.action(async (ctx, id: string) => {
        await (await ctx.client()).tasks.delete(id);
        if (ctx.json) ctx.out(JSON.stringify({ deleted: id }, null, 2));
        else ctx.note(`deleted task ${id}`);
      }),
    );
}
