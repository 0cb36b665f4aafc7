/** `agenthost keys list`: list the account’s API keys: id, name, prefix, agent and creation time (never the keys). */
import type { Command } from 'commander';
import { isKeyWithPrefix } from '../../api-key-prefix.ts';
import { printList } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import type { KeyRecord } from './key-view.ts';

export function registerKeyList(keys: Command, cli: CliRuntime): void {
  keys
    .command('list')
    .description('List the account’s API keys: id, name, prefix, agent and creation time (never the keys)')
    .addHelpText('after', ['', 'Example:', '  agenthost keys list --json'].join('\n'))
    .action(
      cli.action(async (ctx) => {
        const client = await ctx.client();
        const { apiKey } = await ctx.resolve();
        const page = await client.apiKeys.list();
        printList(
          ctx,
          page,
          page.api_keys,
          [
            { header: 'ID', value: (k: KeyRecord) => k.id },
            { header: 'NAME', value: (k: KeyRecord) => k.name },
            { header: 'PREFIX', value: (k: KeyRecord) => k.prefix },
            { header: 'AGENT', value: (k: KeyRecord) => k.agent },
            { header: 'CREATED', value: (k: KeyRecord) => k.created_at },
            {
              header: 'IN USE',
              value: (k: KeyRecord) => (isKeyWithPrefix(apiKey, k.prefix) ? 'this CLI' : ''),
            },
          ],
          'no API keys',
        );
      }),
    );
}
