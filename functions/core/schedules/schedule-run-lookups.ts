import type { CoreDeps } from '../../ports/core-deps.ts';
import { PlatformError } from '../../shared/errors.ts';
import { accountKeys } from '../accounts/account-keys.ts';
import { findVersion } from '../agents/agent-lookup.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import { type AuthContext, authContextOf } from '../api-keys/api-keys.ts';
import { memberKeys } from '../workspaces/member-record.ts';
import type { Schedule } from './schedule-record.ts';

/**
 * What a scheduled run looks up before its call: whom it acts as, and the agent version it runs.
 * A lookup's answer is shared by the runs that ask for the same thing while it lives: the local
 * loop keeps one for a pass (a burst of a thousand runs of one creator read the account and the
 * membership once, not a thousand times); any other run (AWS, a webhook, a manual run) takes a
 * fresh one. Sharing lets a removed member's runs go on for the rest of the pass (and the runs it
 * queued, which start as earlier ones end): the next pass reads again. A deleted version stops at
 * once all the same: the call checks the version itself (callAgent).
 */
export interface RunLookups {
  /**
   * The schedule's creator, who must still be a member of its workspace (a removed member's
   * schedules fail their runs rather than keep acting for them). The run's calls count against
   * that account's quotas, and its secrets come from the schedule's workspace.
   */
  auth(schedule: Schedule): Promise<AuthContext>;
  /** The version a schedule runs (deleted ones included: the caller decides). */
  version(schedule: Schedule): Promise<AgentVersion | undefined>;
}

export function createRunLookups(deps: CoreDeps): RunLookups {
  const auths = new Map<string, Promise<AuthContext>>();
  const versions = new Map<string, Promise<AgentVersion | undefined>>();
  return {
    auth(schedule) {
      // The key id names the schedule, so the auth is shared per schedule, its reads per creator.
      const key = `${schedule.created_by}\u0000${schedule.workspace_id}`;
      let lookup = auths.get(key);
      if (!lookup) {
        lookup = Promise.all([
          deps.store.get(accountKeys.account(schedule.created_by)),
          deps.store.get(memberKeys.member(schedule.workspace_id, schedule.created_by)),
        ]).then(([accountItem, member]) => {
          if (!accountItem || !member) {
            throw new PlatformError(
              'FORBIDDEN',
              'The account that created this schedule is no longer a member of its workspace; recreate the schedule',
            );
          }
          return authContextOf(accountItem, '');
        });
        auths.set(key, lookup);
      }
      return lookup.then((auth) => ({
        ...auth,
        keyId: `schedule:${schedule.id}`,
        runWorkspaceId: schedule.workspace_id,
      }));
    },
    version(schedule) {
      const key = `${schedule.agent}@${schedule.agent_version}`;
      let lookup = versions.get(key);
      if (!lookup) {
        const [org, name] = schedule.agent.split('/') as [string, string];
        lookup = findVersion(deps, org, name, schedule.agent_version);
        versions.set(key, lookup);
      }
      return lookup;
    },
  };
}
