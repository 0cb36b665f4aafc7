/** `agenthost runs cancel`: stop a run and everything it started; it ends cancelled. */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { showRun } from './run-view.ts';

export function registerRunCancel(runs: Command, cli: CliRuntime): void {
  runs
    .command('cancel')
    .description('Cancel a run: it stops, with everything it started, and ends cancelled')
    .argument('<id>', 'the run’s id')
    .addHelpText('after', ['', 'Example:', '  agenthost runs cancel RUN_ID'].join('\n'))
    .action(cli.action(async (ctx, id: string) => showRun(ctx, await (await ctx.client()).runs.cancel(id))));
}
