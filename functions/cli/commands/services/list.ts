/** `agenthost services list`: list the workspace’s services. */
import type { Command } from 'commander';
import { printList } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { noteMore, type PageFlags, pageOptions, readPages } from '../../paging.ts';
import { asService } from '../../service-record.ts';
import { serviceColumns } from './service-view.ts';

export function registerServiceList(services: Command, cli: CliRuntime): void {
  pageOptions(
    services
      .command('list')
      .description('List the workspace’s services')
      .addHelpText('after', ['', 'Example:', '  agenthost services list --all --json'].join('\n')),
    'services',
  ).action(
    cli.action(async (ctx, flags: PageFlags) => {
      const client = await ctx.client();
      const ws = await ctx.workspace(client);
      const { items, total } = await readPages(flags, async (page) => {
        const { services: found, total: all } = await client.services.list(ws, page);
        return { items: found.map(asService), total: all };
      });
      printList(ctx, { services: items, total }, items, serviceColumns, 'no services');
      noteMore(ctx, flags, items.length, total);
    }),
  );
}
