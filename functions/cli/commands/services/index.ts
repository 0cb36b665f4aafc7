/**
 * `agenthost services …`: always-on services (docs/services.md). deploy waits until the app runs
 * and prints its URL; restart and update wait the same way; logs reads the app's output with the
 * agent logs' reader (log-follow.ts). A service is named by its id or its name in the workspace.
 * This file holds the group and its small commands; deploy.ts and update.ts add the others.
 */
import type { Command } from 'commander';
import { printJson, printList } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { type LogFlags, showLogs } from '../../log-follow.ts';
import { noteMore, type PageFlags, pageOptions, readPages } from '../../paging.ts';
import { asService, findService } from '../../service-record.ts';
import { logOptions } from '../agents/agent-view.ts';
import { registerServiceDeploy } from './deploy.ts';
import { serviceColumns, settle, showService, type WaitFlags, waitOptions } from './service-view.ts';
import { registerServiceUpdate } from './update.ts';

export function registerServices(program: Command, cli: CliRuntime): void {
  const services = program
    .command('services')
    .description(
      'Always-on services: deploy an agent’s app with a URL, read its logs, restart and update it',
    );

  registerServiceDeploy(services, cli);

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

  services
    .command('get')
    .description('Show a service and its recent events')
    .argument('<service>', 'the service’s name or id')
    .addHelpText('after', ['', 'Example:', '  agenthost services get web'].join('\n'))
    .action(
      cli.action(async (ctx, ref: string) => {
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        const { id } = await findService(client, ws, ref);
        showService(ctx, asService(await client.services.get(ws, id)));
      }),
    );

  logOptions(
    services
      .command('logs')
      .description('Show a service’s output (stdout info, stderr error, [platform] notes), oldest first')
      .argument('<service>', 'the service’s name or id'),
  )
    .addHelpText('after', ['', 'Example:', '  agenthost services logs web --level error --follow'].join('\n'))
    .action(
      cli.action(async (ctx, ref: string, flags: LogFlags) => {
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        const { id } = await findService(client, ws, ref);
        await showLogs(ctx, (query) => client.services.logs(ws, id, query), flags);
      }),
    );

  waitOptions(
    services
      .command('restart')
      .description('Restart a service on the same version (resumes a paused one) and wait until it runs')
      .argument('<service>', 'the service’s name or id')
      .addHelpText(
        'after',
        [
          '',
          'Examples:',
          '  agenthost services restart web',
          '  agenthost services restart web --no-wait',
        ].join('\n'),
      ),
  ).action(
    cli.action(async (ctx, ref: string, flags: WaitFlags) => {
      const client = await ctx.client();
      const ws = await ctx.workspace(client);
      const { id } = await findService(client, ws, ref);
      const s = await settle(ctx, client, ws, asService(await client.services.restart(ws, id)), flags);
      showService(ctx, s);
    }),
  );

  registerServiceUpdate(services, cli);

  services
    .command('delete')
    .description('Stop a service and delete it (its name and its slot in your plan are freed)')
    .argument('<service>', 'the service’s name or id')
    .addHelpText('after', ['', 'Example:', '  agenthost services delete web'].join('\n'))
    .action(
      cli.action(async (ctx, ref: string) => {
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        const s = await findService(client, ws, ref);
        await client.services.delete(ws, s.id);
        if (ctx.json) printJson(ctx, { deleted: s.id, name: s.name });
        else ctx.note(`deleted service ${s.name} (${s.id})`);
      }),
    );
}
