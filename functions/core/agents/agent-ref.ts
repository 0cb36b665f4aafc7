import type { CoreDeps } from '../../ports/core-deps.ts';
import { type FieldIssue, invalidInput } from '../../shared/errors.ts';
import { findLatest, findVersion } from './agent-lookup.ts';
import type { AgentVersion } from './agent-record.ts';
import { requireVisible } from './visibility.ts';

/**
 * The agent a schedule or service runs, from `org/agent` (the newest live version) or
 * `org/agent@vN` (pinned): 400 on `body.agent` when it does not exist; 403 (the visibility check)
 * when it is private to another workspace that the caller is not a member of.
 */
export async function resolveAgentRef(
  deps: CoreDeps,
  ref: string,
  workspaceId: string,
  accountId: string,
  /** The body field the ref came from, which an error names (a service's PATCH sends `version`). */
  field = 'body.agent',
): Promise<{ agent: AgentVersion; pinned: boolean }> {
  const [path, version] = ref.split('@') as [string, string | undefined];
  const [org, name] = path.split('/') as [string, string];
  const agent = version ? await findVersion(deps, org, name, version) : await findLatest(deps, org, name);
  if (!agent || agent.deleted_at) throw invalidInput([{ field, message: `${ref} does not exist` }]);
  await requireVisible(deps, agent, { workspaceId, accountId }, { ref, field });
  return { agent, pinned: version !== undefined };
}

/** Checks a user-given alert URL when saved (docs/schedules.md), adding a field issue if refused. */
export async function checkAlertUrlField(
  deps: CoreDeps,
  url: string | null | undefined,
  issues: FieldIssue[],
): Promise<void> {
  if (!url) return;
  const checked = await deps.notifier.checkUrl(url);
  if (!checked.ok) issues.push({ field: 'body.alert_webhook_url', message: checked.reason });
}
