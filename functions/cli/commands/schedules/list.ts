/** `agenthost schedules list`: list the workspace’s schedules. */
import { type Command, Option } from 'commander';
import { printList } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { noteMore, type PageFlags, pageOptions, readPages } from '../../paging.ts';
import { scheduleColumns } from './schedule-view.ts';

export function registerScheduleList(schedules: Command, cli: CliRuntime): void {
  pageOptions(
    schedules
      .command('list')
      .description('List the workspace’s schedules')
      .option('--agent <org/name>', 'only the schedules of this agent')
      .addOption(new Option('--type <type>', 'only this type').choices(['cron', 'webhook']))
      .addHelpText(
        'after',
        ['', 'Example:', '  agenthost schedules list --agent acme/report --type cron --all'].join('\n'),
      ),
    'schedules',
  ).action(
    cli.action(async (ctx, flags: PageFlags & { agent?: string; type?: 'cron' | 'webhook' }) => {
      const client = await ctx.client();
      const ws = await ctx.workspace(client);
      const filter = {
        ...(flags.agent ? { agent: flags.agent } : {}),
        ...(flags.type ? { type: flags.type } : {}),
      };
      const { items, total } = await readPages(flags, async (page) => {
        const { schedules: found, total: all } = await client.schedules.list(ws, { ...filter, ...page });
        return { items: found, total: all };
      });
      printList(ctx, { schedules: items, total }, items, scheduleColumns, 'no schedules');
      noteMore(ctx, flags, items.length, total);
    }),
  );
}
