import { isKeyWithPrefix } from '../../api-key-prefix.ts';
import type { CliContext, Client } from '../../cli-context.ts';
import { CliError, EXIT } from '../../cli-errors.ts';

export type KeyRecord = Awaited<ReturnType<Client['apiKeys']['list']>>['api_keys'][number];

/** The key an id or a name stands for; a name must be unique among the account's keys. */
export async function findKey(client: Client, ref: string): Promise<KeyRecord> {
  const { api_keys: keys } = await client.apiKeys.list();
  const byId = keys.find((k) => k.id === ref);
  if (byId) return byId;
  const named = keys.filter((k) => k.name === ref);
  if (named.length === 1 && named[0]) return named[0];
  if (named.length > 1)
    throw new CliError(
      `${named.length} keys are named ${ref}: ${named.map((k) => k.id).join(', ')}`,
      EXIT.usage,
      'revoke one by its id (agenthost keys list)',
    );
  throw new CliError(`no API key with the id or name ${ref}`, EXIT.notFound, 'agenthost keys list');
}

/** Whether `key` is the one this command runs with. */
export async function isOwnKey(ctx: CliContext, key: KeyRecord): Promise<boolean> {
  return isKeyWithPrefix((await ctx.resolve()).apiKey, key.prefix);
}
