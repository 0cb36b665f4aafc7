/** `agenthost secrets list`: list the workspace’s secret names with when each was created and last set. */
import type { Command } from 'commander';
import { printList } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import type { SecretRow } from './secret-view.ts';

export function registerSecretList(secrets: Command, cli: CliRuntime): void {
  secrets
    .command('list')
    .description('List the workspace’s secret names with when each was created and last set')
    .addHelpText('after', '\nExample:\n  agenthost secrets list -w WORKSPACE_ID')
    .action(
      cli.action(async (ctx) => {
        const client = await ctx.client();
        const workspace = await ctx.workspace(client);
        const page = await client.secrets.list(workspace);
        printList(
          ctx,
          page,
          page.secrets,
          [
            { header: 'NAME', value: (s: SecretRow) => s.name },
            { header: 'CREATED', value: (s: SecretRow) => s.created_at },
            { header: 'UPDATED', value: (s: SecretRow) => s.updated_at },
          ],
          'no secrets',
        );
      }),
    );
}
