/** `agenthost services get`: show a service and its recent events. */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { asService, findService } from '../../service-record.ts';
import { showService } from './service-view.ts';

export function registerServiceGet(services: Command, cli: CliRuntime): void {
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
}
