import type { CoreDeps } from '../../ports/core-deps.ts';
import { SHARED } from '../../ports/store.ts';
import { PlatformError } from '../../shared/errors.ts';
import { memberKeys } from '../workspaces/member-record.ts';
import type { AgentVersion } from './agent-record.ts';

/**
 * Who refers to an agent or skill. A reference made by a request (a call, a skill header, a fork, a
 * deploy) is seen by the caller's account, and for deploys also by the target workspace; a
 * reference stored in an agent (default_skills, manifest dependencies) is seen by the agent's own
 * workspace only, since whoever calls that agent later gets what it references.
 */
export interface Viewer {
  accountId?: string;
  workspaceId?: string;
}

/**
 * The one visibility rule (docs/roles.md, "Visibility"): a public agent or skill may be referred to
 * by anyone; a private one only from its own workspace, or by an account that is a member of it.
 */
export async function isVisible(deps: CoreDeps, thing: AgentVersion, viewer: Viewer): Promise<boolean> {
  if (thing.manifest.is_public) return true;
  if (viewer.workspaceId !== undefined && viewer.workspaceId === thing.workspace_id) return true;
  if (viewer.accountId === undefined) return false;
  return (
    (await deps.store.get(memberKeys.member(thing.workspace_id, viewer.accountId), SHARED)) !== undefined
  );
}

/**
 * Every way of referring to an agent or skill goes through here: the call path, X-Platform-Skills,
 * X-Platform-Skills-Only, default_skills (at call and at publish time), manifest dependencies at
 * publish time, fork, and schedule and service deploys. Another workspace's private thing is
 * **403 FORBIDDEN** (the spec's "caller lacks permission for the agent"), with a message that names
 * only the reference the client gave, never anything of its content.
 */
export async function requireVisible(
  deps: CoreDeps,
  thing: AgentVersion,
  viewer: Viewer,
  reference: { ref: string; field?: string },
): Promise<void> {
  if (await isVisible(deps, thing, viewer)) return;
  const what = thing.manifest.type === 'skill' ? 'skill' : 'agent';
  throw new PlatformError(
    'FORBIDDEN',
    `The ${what} ${reference.ref} is private to its workspace`,
    reference.field
      ? { fields: [{ field: reference.field, message: 'is private to another workspace' }] }
      : undefined,
  );
}
