import type { CoreDeps } from '../../ports/core-deps.ts';
import { PlatformError } from '../../shared/errors.ts';
import { memberEntity, memberKeys } from './member-record.ts';

export type Role = 'owner' | 'member';

export interface Membership {
  workspaceId: string;
  accountId: string;
  role: Role;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The one membership-and-role check of every workspace-scoped operation. Not a member (or no such
 * workspace) is 404, so ids of other tenants' workspaces leak nothing; a member where an owner is
 * needed is 403.
 */
export async function requireMembership(
  deps: CoreDeps,
  accountId: string,
  workspaceId: string,
  needed: Role = 'member',
  options: { resource?: string } = {},
): Promise<Membership> {
  const item = UUID.test(workspaceId)
    ? await deps.store.get(memberKeys.member(workspaceId, accountId))
    : undefined;
  // For a resource inside the workspace (a task, an agent), not-a-member reads as that resource missing.
  if (!item) throw new PlatformError('NOT_FOUND', `${options.resource ?? 'Workspace'} not found`);
  const { role } = memberEntity.fromItem(item);
  if (needed === 'owner' && role !== 'owner') {
    throw new PlatformError('FORBIDDEN', 'This operation needs the owner role in the workspace');
  }
  return { workspaceId, accountId, role };
}
