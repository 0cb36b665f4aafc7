/** `agenthost secrets set`: create or replace a secret (workspace owners); the value comes from stdin or a prompt. */
import type { Command } from 'commander';
import { printRecord } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { readSecretInput } from '../../secret-input.ts';
import { checkName, requireOwner } from './secret-view.ts';

export function registerSecretSet(secrets: Command, cli: CliRuntime): void {
  secrets
    .command('set')
    .description('Create or replace a secret (workspace owners); the value comes from stdin or a prompt')
    .argument('<name>', 'the secret’s name, an environment variable name (OPENAI_API_KEY)')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  agenthost secrets set OPENAI_API_KEY',
        '  printf %s "$OPENAI_API_KEY" | agenthost secrets set OPENAI_API_KEY',
        '  agenthost secrets set SERVICE_ACCOUNT_JSON < key.json',
        'The value is never an argument: on a terminal you are prompted (input masked), otherwise it',
        'is read from stdin to its end (one trailing newline dropped).',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, name: string) => {
        await checkName(name);
        const client = await ctx.client();
        const workspace = await ctx.workspace(client);
        await requireOwner(client, workspace);
        const value = await readSecretInput(ctx, `value of ${name}`);
        const stored = await client.secrets.put(workspace, { name, value });
        printRecord(ctx, stored, [
          ['name', stored.name],
          ['workspace', workspace],
          ['status', stored.created ? 'created' : 'replaced'],
          ['updated', stored.updated_at],
        ]);
      }),
    );
}
