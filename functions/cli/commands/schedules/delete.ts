/** `agenthost schedules delete`: delete a schedule (its runs and timeline stay readable for 90 days). */
import type { Command } from 'commander';
import { printJson } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';

export function registerScheduleDelete(schedules: Command, cli: CliRuntime): void {
  schedules
    .command('delete')
    .description('Delete a schedule (its runs and timeline stay readable for 90 days)')
    .argument('<schedule-id>', 'the schedule’s id')
    .addHelpText('after', ['', 'Example:', '  agenthost schedules delete 3f2a…'].join('\n'))
    .action(
      cli.action(async (ctx, id: string) => {
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        await client.schedules.delete(ws, id);
        if (ctx.json) printJson(ctx, { deleted: id });
        else ctx.note(`deleted schedule ${id}`);
      }),
    );
}
