/** `agenthost services logs`: show a service’s output (stdout info, stderr error, [platform] notes), oldest first. */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { type LogFlags, showLogs } from '../../log-follow.ts';
import { findService } from '../../service-record.ts';
import { logOptions } from '../agents/agent-view.ts';

export function registerServiceLogs(services: Command, cli: CliRuntime): void {
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
}
