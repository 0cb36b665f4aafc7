import type { Client } from '../../cli-context.ts';
import { CliError, EXIT } from '../../cli-errors.ts';

export type Workspace = Awaited<ReturnType<Client['workspaces']['list']>>['workspaces'][number];
export type Member = Awaited<ReturnType<Client['workspaces']['members']>>['members'][number];

/** The caller's workspace with this id or slug; not a member is "not found", as the API answers. */
export async function findWorkspace(client: Client, ref: string): Promise<Workspace> {
  const { workspaces } = await client.workspaces.list();
  const found = workspaces.find((w) => w.id === ref) ?? workspaces.find((w) => w.slug === ref);
  if (!found)
    throw new CliError(
      `you are not a member of a workspace ${ref}`,
      EXIT.notFound,
      'agenthost workspaces list shows yours',
    );
  return found;
}
