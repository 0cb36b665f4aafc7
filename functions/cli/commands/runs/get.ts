/** `agenthost runs get`: show one run; with --json, the whole run, its result's body included. */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { showRun } from './run-view.ts';

export function registerRunGet(runs: Command, cli: CliRuntime): void {
  runs
    .command('get')
    .description('Show one run; --json for the whole run, its result’s body included')
    .argument('<id>', 'the run’s id')
    .addHelpText('after', ['', 'Example:', '  agenthost runs get RUN_ID --json'].join('\n'))
    .action(cli.action(async (ctx, id: string) => showRun(ctx, await (await ctx.client()).runs.get(id))));
}
