/**
 * `agenthost keys …`: the account's API keys. The platform stores only a key's hash, so a new key
 * is printed exactly once, by `create`, marked as such; `list` shows the prefix that recognises
 * one. Revoking the key the CLI itself runs with is allowed (the platform refuses only the last
 * key), with a warning, because the next command will fail with it.
 */
import type { Command } from 'commander';
import { isKeyWithPrefix } from '../api-key-prefix.ts';
import type { CliContext, Client } from '../cli-context.ts';
import { CliError, EXIT } from '../cli-errors.ts';
import { printList, printRecord } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';

type KeyRecord = Awaited<ReturnType<Client['apiKeys']['list']>>['api_keys'][number];

/** The key an id or a name stands for; a name must be unique among the account's keys. */
async function findKey(client: Client, ref: string): Promise<KeyRecord> {
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
async function isOwnKey(ctx: CliContext, key: KeyRecord): Promise<boolean> {
  return isKeyWithPrefix((await ctx.resolve()).apiKey, key.prefix);
}

export function registerKeys(program: Command, cli: CliRuntime): void {
  const keys = program.command('keys').description('Your account’s API keys: list, create, revoke');

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

  keys
    .command('create')
    .description('Create an API key and print it once: store it now, it cannot be shown again')
    .option('--name <label>', 'a label to recognise the key by (default: unnamed)')
    .option(
      '--agent <name>',
      'mark the key as an agent’s: tasks created with it record this agent name as created_by',
    )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  agenthost keys create --name ci',
        '  agenthost keys create --name triage-bot --agent triage --json | jq -r .api_key',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, opts: { name?: string; agent?: string }) => {
        const client = await ctx.client();
        const created = await client.apiKeys.create({
          ...(opts.name !== undefined ? { name: opts.name } : {}),
          ...(opts.agent !== undefined ? { agent: opts.agent } : {}),
        });
        ctx.note('The API key is shown once: store it now (agenthost login, or AGENTHOST_API_KEY).');
        printRecord(ctx, created, [
          ['id', created.id],
          ['name', created.name],
          ['agent', created.agent],
          ['created', created.created_at],
          ['api key', created.api_key],
        ]);
      }),
    );

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
