/** `agenthost runs list`: the account’s runs, newest first. */
import { type Command, Option } from 'commander';
import { RUN_STATUSES } from '../../../core/runs/run-names.ts';
import { printList } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { intArg } from '../../option-parsers.ts';
import { runColumns } from './run-view.ts';

interface ListFlags {
  status?: (typeof RUN_STATUSES)[number];
  agent?: string;
  limit?: number;
}

export function registerRunList(runs: Command, cli: CliRuntime): void {
  runs
    .command('list')
    .description('List your runs, newest first')
    .addOption(new Option('--status <status>', 'only runs in this status').choices(RUN_STATUSES))
    .option('--agent <org/name>', 'only runs of this agent (org/name, or org/name/vN)')
    .option('--limit <n>', 'how many (default 20)', intArg(1, 100))
    .addHelpText('after', ['', 'Example:', '  agenthost runs list --status running'].join('\n'))
    .action(
      cli.action(async (ctx, flags: ListFlags) => {
        const page = await (await ctx.client()).runs.list({
          ...(flags.status ? { status: flags.status } : {}),
          ...(flags.agent ? { agent: flags.agent } : {}),
          ...(flags.limit ? { limit: flags.limit } : {}),
        });
        printList(ctx, page, page.runs, runColumns, 'no runs');
      }),
    );
}
