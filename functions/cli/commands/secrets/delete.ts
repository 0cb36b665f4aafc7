/** `agenthost secrets delete`: delete a secret (workspace owners); agents that declare it can no longer run. */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { checkName } from './secret-view.ts';

export function registerSecretDelete(secrets: Command, cli: CliRuntime): void {
  secrets
    .command('delete')
    .description('Delete a secret (workspace owners); agents that declare it can no longer run')
    .argument('<name>', 'the secret’s name')
    .addHelpText('after', '\nExample:\n  agenthost secrets delete OPENAI_API_KEY')
    .action(
      cli.action(async (ctx, name: string) => {
        await checkName(name);
        const client = await ctx.client();
        const workspace = await ctx.workspace(client);
        await client.secrets.delete(workspace, name);
        if (ctx.json) ctx.out(JSON.stringify({ deleted: name, workspace_id: workspace }, null, 2));
        else ctx.note(`deleted secret ${name} from workspace ${workspace}`);
      }),
    );
}
