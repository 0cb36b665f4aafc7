/** `agenthost services delete`: stop a service and delete it (its name and its slot in your plan are freed). */
import type { Command } from 'commander';
import { printJson } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { findService } from '../../service-record.ts';

export function registerServiceDelete(services: Command, cli: CliRuntime): void {
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
