import type { CoreDeps } from '../../ports/core-deps.ts';
import { queryAll } from '../../ports/store.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import { scheduleEventItem } from './schedule-events.ts';
import { fromScheduleItem, mutateSchedule, scheduleKeys } from './schedule-record.ts';

/**
 * After a publish: every enabled schedule of that agent in the publishing workspace whose
 * auto_update is on moves to the new version, each with a version_updated timeline entry naming
 * the old and new versions. Pinned, auto_update-off and disabled schedules stay where they are.
 * Returns the ids of the schedules moved. Never throws: a publish must not fail over this.
 */
export async function followNewVersion(deps: CoreDeps, agent: AgentVersion): Promise<string[]> {
  const moved: string[] = [];
  const ref = `${agent.org}/${agent.name}`;
  try {
    const items = await queryAll(deps.store, {
      index: 'gsi1',
      pk: scheduleKeys.ofWorkspace(agent.workspace_id),
    });
    for (const item of items) {
      const candidate = fromScheduleItem(item).schedule;
      if (candidate.agent !== ref || !candidate.auto_update || !candidate.enabled) continue;
      const outcome = await mutateSchedule(
        deps,
        candidate.id,
        (stored) => {
          const s = stored.schedule;
          if (stored.deletedAt || !s.auto_update || !s.enabled || s.agent_version === agent.version)
            return undefined;
          // Never move backwards (two publishes landing out of order).
          if (Number(s.agent_version.slice(1)) > agent.version_number) return undefined;
          return {
            next: {
              ...s,
              agent_version: agent.version,
              pinned: false,
              updated_at: deps.clock.now().toISOString(),
            },
            items: [
              scheduleEventItem(
                deps,
                s.id,
                'version_updated',
                `Version updated from ${s.agent_version} to ${agent.version} (auto_update on publish)`,
                { old_version: s.agent_version, new_version: agent.version },
              ),
            ],
            result: undefined,
          };
        },
        10,
      );
      if (outcome.status === 'written') moved.push(candidate.id);
    }
  } catch (err) {
    deps.logger.error('schedules not moved to the new version', {
      agent: ref,
      version: agent.version,
      error: String(err),
    });
  }
  return moved;
}
