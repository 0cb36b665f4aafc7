/** `agenthost schedules get`: show a schedule. */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { showSchedule } from './schedule-view.ts';

export function registerScheduleGet(schedules: Command, cli: CliRuntime): void {
  schedules
    .command('get')
    .description('Show a schedule')
    .argument('<schedule-id>', 'the schedule’s id (schedules list)')
    .addHelpText('after', ['', 'Example:', '  agenthost schedules get 3f2a… --json'].join('\n'))
    .action(
      cli.action(async (ctx, id: string) => {
        const client = await ctx.client();
        showSchedule(ctx, await client.schedules.get(await ctx.workspace(client), id));
      }),
    );
}
