/**
 * `agenthost secrets …`: a workspace's secrets (the values agents get as environment variables).
 * The platform never returns a value, and the CLI never takes one as an argument (it would land in
 * the shell history and the process list): `set` reads it from stdin or a masked prompt.
 */
import type { Command } from 'commander';
import type { Client } from '../cli-context.ts';
import { CliError, EXIT } from '../cli-errors.ts';
import { printList, printRecord } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { readSecretInput } from '../secret-input.ts';

interface SecretRow {
  name: string;
  created_at: string;
  updated_at: string;
}

/** Checked before the value is asked for, so nobody types a secret only to have its name refused. */
async function checkName(name: string): Promise<void> {
  // The platform's own rule, imported when a secret is named: zod is not loaded by every command.
  const { secretName } = await import('../../core/secrets/secret-schemas.ts');
  const parsed = secretName.safeParse(name);
  if (!parsed.success)
    throw new CliError(
      `secret name ${JSON.stringify(name)} ${parsed.error.issues[0]?.message ?? 'is not valid'}`,
      EXIT.usage,
      'name it like an environment variable: OPENAI_API_KEY',
    );
}

/**
 * Setting needs the owner role. The platform checks it too; checked here first so that a member is
 * told before typing the value, not after.
 */
async function requireOwner(client: Client, workspaceId: string): Promise<void> {
  const { workspaces } = await client.workspaces.list();
  const workspace = workspaces.find((w) => w.id === workspaceId);
  if (!workspace)
    throw new CliError(
      `you are not a member of a workspace ${workspaceId}`,
      EXIT.notFound,
      'agenthost workspaces list shows yours',
    );
  if (workspace.role !== 'owner')
    throw new CliError(
      `only owners of workspace ${workspace.name} may set its secrets; your role there is ${workspace.role}`,
      EXIT.auth,
      'ask an owner (agenthost workspaces members)',
      'FORBIDDEN',
    );
}

export function registerSecrets(program: Command, cli: CliRuntime): void {
  const secrets = program
    .command('secrets')
    .description('A workspace’s secrets: names and dates only; values are write-only');

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
