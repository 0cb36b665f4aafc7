import type { Client } from '../../cli-context.ts';
import { CliError, EXIT } from '../../cli-errors.ts';

export interface SecretRow {
  name: string;
  created_at: string;
  updated_at: string;
}

/** Checked before the value is asked for, so nobody types a secret only to have its name refused. */
export async function checkName(name: string): Promise<void> {
  // The platform's own rule, imported when a secret is named: zod is not loaded by every command.
  const { secretName } = await import('../../../core/secrets/secret-schemas.ts');
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
export async function requireOwner(client: Client, workspaceId: string): Promise<void> {
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
