import { randomBytes, randomUUID } from 'node:crypto';
import type * as z from 'zod';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond, queryAll, TransactionCanceledError } from '../../ports/store.ts';
import { PlatformError } from '../../shared/errors.ts';
import { getAccount } from '../accounts/account.ts';
import { slugSchema } from '../accounts/slug.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { type Role, requireMembership } from './authorize.ts';
import { withdrawInvitationsOf } from './invitations.ts';
import { memberEntity, memberKeys } from './member-record.ts';
import { ownedWorkspacesExceeded, releaseOwnedWorkspace, takeOwnedWorkspace } from './owned-workspaces.ts';
import { workspaceEntity, workspaceKeys } from './workspace-record.ts';
import type { Member, Workspace } from './workspace-schemas.ts';

/**
 * Creates a workspace with the caller as its only owner, counted against the workspaces its tier
 * lets it own (owned-workspaces.ts). An explicit slug that is taken is a 409; a slug derived from
 * the name gets a short random suffix until it is free.
 */
export async function createWorkspace(
  deps: CoreDeps,
  auth: AuthContext,
  input: { name: string; slug?: string | undefined },
): Promise<Workspace> {
  const now = deps.clock.now().toISOString();
  const id = randomUUID();
  const candidates = input.slug ? [input.slug] : derivedSlugs(input.name);
  for (const slug of candidates) {
    try {
      await deps.store.transactWrite([
        { name: 'slug', put: { ...workspaceKeys.slug(slug), workspace_id: id }, condition: cond.notExists() },
        {
          put: workspaceEntity.toItem({
            id,
            name: input.name,
            slug,
            personal: false,
            owner_count: 1,
            created_at: now,
          }),
          condition: cond.notExists(),
        },
        {
          put: memberEntity.toItem({
            workspace_id: id,
            account_id: auth.accountId,
            role: 'owner',
            joined_at: now,
          }),
        },
        takeOwnedWorkspace(auth.accountId, auth.tier),
      ]);
      return { id, name: input.name, slug, role: 'owner', personal: false, created_at: now };
    } catch (err) {
      if (err instanceof TransactionCanceledError && err.cancelledBy('owned')) {
        throw ownedWorkspacesExceeded(auth.tier);
      }
      if (!(err instanceof TransactionCanceledError) || !err.cancelledBy('slug')) throw err;
    }
  }
  if (input.slug) throw new PlatformError('CONFLICT', `The workspace slug "${input.slug}" is taken`);
  throw new PlatformError('CONFLICT', 'No free slug could be derived from that name; give a slug');
}

/** The name's slug, then that slug with random suffixes. */
function derivedSlugs(name: string): string[] {
  const base =
    name
      .normalize('NFKD')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 30)
      .replace(/-+$/, '') || 'workspace';
  const out: string[] = [];
  if (slugSchema.safeParse(base).success) out.push(base);
  for (let i = 0; i < 5; i++) out.push(`${base}-${randomBytes(3).toString('hex')}`);
  return out.filter((s) => slugSchema.safeParse(s).success);
}

/** The caller's workspaces with the caller's role in each, oldest membership first. */
export async function listWorkspaces(deps: CoreDeps, auth: AuthContext): Promise<Workspace[]> {
  const memberships = await queryAll(deps.store, {
    index: 'gsi1',
    pk: memberKeys.ofAccount(auth.accountId),
  });
  const workspaces = await Promise.all(
    memberships.map(async (item) => {
      const m = memberEntity.fromItem(item);
      const ws = await deps.store.get(workspaceKeys.workspace(m.workspace_id));
      return ws ? toWorkspace(workspaceEntity.fromItem(ws), m.role) : undefined;
    }),
  );
  return workspaces.filter((w): w is Workspace => w !== undefined);
}

export async function listMembers(deps: CoreDeps, auth: AuthContext, workspaceId: string): Promise<Member[]> {
  await requireMembership(deps, auth.accountId, workspaceId, 'member');
  const items = await queryAll(deps.store, {
    pk: workspaceKeys.workspace(workspaceId).pk,
    sk: { beginsWith: memberKeys.prefix },
  });
  return Promise.all(
    items.map(async (item) => {
      const m = memberEntity.fromItem(item);
      const account = await getAccount(deps, m.account_id);
      return {
        account_id: m.account_id,
        org: account?.org ?? null,
        email: account?.email ?? null,
        role: m.role,
        joined_at: m.joined_at,
      };
    }),
  );
}

/**
 * Removes a member: an owner may remove anyone, a member only themself (leaving). A workspace
 * always keeps at least one owner: the owner count on the workspace item is decremented under the
 * condition that it stays at least 1, in the same transaction as the removal.
 */
export async function removeMember(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  accountId: string,
): Promise<void> {
  const self = accountId === auth.accountId;
  await requireMembership(deps, auth.accountId, workspaceId, self ? 'member' : 'owner');
  const item = await deps.store.get(memberKeys.member(workspaceId, accountId));
  if (!item) throw new PlatformError('NOT_FOUND', 'That account is not a member of the workspace');
  const member = memberEntity.fromItem(item);
  const wasOwner = member.role === 'owner';
  try {
    await deps.store.transactWrite([
      { delete: memberKeys.member(workspaceId, accountId), condition: cond.eq('role', member.role) },
      {
        name: 'owner count',
        update: workspaceKeys.workspace(workspaceId),
        spec: { add: { owner_count: wasOwner ? -1 : 0 } },
        condition: wasOwner ? cond.gt('owner_count', 1) : cond.exists(),
      },
      ...(wasOwner ? [releaseOwnedWorkspace(accountId)] : []),
    ]);
  } catch (err) {
    if (!(err instanceof TransactionCanceledError)) throw err;
    if (err.cancelledBy('owner count') && wasOwner) {
      throw new PlatformError('CONFLICT', 'A workspace keeps at least one owner: add another owner first');
    }
    throw new PlatformError('CONFLICT', 'The membership changed meanwhile; try again');
  }
  // The invitations it sent are withdrawn: accepting them is refused anyway (invitations.ts), and
  // this keeps them out of the lists and frees the inviter's pending-invitation slots.
  if (wasOwner) await withdrawInvitationsOf(deps, workspaceId, accountId);
}

function toWorkspace(ws: z.output<typeof workspaceEntity.schema>, role: Role): Workspace {
  return { id: ws.id, name: ws.name, slug: ws.slug, role, personal: ws.personal, created_at: ws.created_at };
}
