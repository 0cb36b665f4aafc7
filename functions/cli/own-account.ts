import type { Client } from './cli-context.ts';

type Member = Awaited<ReturnType<Client['workspaces']['members']>>['members'][number];

/**
 * The account behind the key, as a member record (account id, org, email). The API has no "me"
 * route; a personal workspace has exactly one member, its account, so that member is the caller.
 * Undefined when the key reaches no personal workspace.
 */
export async function ownAccount(client: Client): Promise<Member | undefined> {
  const { workspaces } = await client.workspaces.list();
  const personal = workspaces.find((w) => w.personal);
  if (!personal) return undefined;
  return (await client.workspaces.members(personal.id)).members[0];
}
