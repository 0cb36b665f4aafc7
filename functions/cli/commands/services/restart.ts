/** `agenthost services restart`: restart a service on the same version (resumes a paused one) and wait until it runs. */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { asService, findService } from '../../service-record.ts';
import { settle, showService, type WaitFlags, waitOptions } from './service-view.ts';

export function registerServiceRestart(services: Command, cli: CliRuntime): void {
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
}
