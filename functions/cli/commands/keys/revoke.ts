/** `agenthost keys revoke`: revoke (delete) an API key: it is refused from the next request on. */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { findKey, isOwnKey } from './key-view.ts';

export function registerKeyRevoke(keys: Command, cli: CliRuntime): void {
  keys
    .command('revoke')
    .description('Revoke (delete) an API key: it is refused from the next request on')
    .argument('<key>', 'the key’s id, or its name when no other key has that name')
    .addHelpText(
      'after',
      [
        '',
        'Example:',
        '  agenthost keys revoke ci',
        'The account’s last key cannot be revoked (create another first).',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, ref: string) => {
        const client = await ctx.client();
        const key = await findKey(client, ref);
        const own = await isOwnKey(ctx, key);
        await client.apiKeys.delete(key.id);
        if (ctx.json) ctx.out(JSON.stringify({ revoked: key.id, name: key.name }, null, 2));
        else ctx.note(`revoked API key ${key.name} (${key.id})`);
        if (own)
          ctx.note('warning: that was the key this CLI runs with; sign in with another (agenthost login)');
      }),
    );
}
