import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { AgentHostClient } from '../api-client.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { QueryState } from '../components/query-state.tsx';
import { useSession } from '../session.tsx';

type Agent = Awaited<ReturnType<AgentHostClient['agents']['get']>>;
type Check = Awaited<ReturnType<AgentHostClient['agents']['deleteCheck']>>;

/**
 * Deleting the version, or every version, each behind a dialog that first says what the API's
 * delete-check answered: the agents pinning it, the schedules and services running it, and whether
 * it needs force (then their runs fail). Without force the API still refuses (409) anything that
 * came to depend on it since the check was read.
 */
export function AgentDelete({ agent }: { agent: Agent }) {
  const { client } = useSession();
  const queryClient = useQueryClient();
  const check = useQuery({
    queryKey: ['agent-delete-check', agent.id],
    queryFn: () => client.agents.deleteCheck(agent.id),
    staleTime: 0,
  });
  const remove = async (allVersions: boolean, force: boolean) => {
    await client.agents.delete(agent.id, {
      ...(allVersions ? { mode: 'all_versions' as const } : {}),
      ...(force ? { force: 'true' as const } : {}),
    });
    await queryClient.invalidateQueries({ queryKey: ['agents'] });
    queryClient.removeQueries({ queryKey: ['agent', agent.id] });
    window.location.hash = '#/agents';
  };
  const c = check.data;
  if (!c) return <QueryState query={check} what="what deleting it touches" />;
  const versionForce = c.confirmation === 'force=true';
  const allForce = c.all_versions.confirmation.includes('force=true');
  return (
    <div class="toolbar">
      <ConfirmButton
        label="Delete this version"
        title={`Delete ${c.ref}?`}
        confirmLabel={versionForce ? 'Delete anyway' : 'Delete'}
        onConfirm={() => remove(false, versionForce)}
      >
        <CheckAnswer check={c} touched={c} what={`version ${agent.version}`} force={versionForce} />
      </ConfirmButton>
      {c.versions.length > 1 && (
        <ConfirmButton
          label="Delete all versions"
          title={`Delete every version of ${agent.org}/${agent.name}?`}
          confirmLabel={allForce ? 'Delete all anyway' : 'Delete all'}
          onConfirm={() => remove(true, allForce)}
        >
          <CheckAnswer
            check={c}
            touched={c.all_versions}
            what={`all ${c.versions.length} versions (${c.versions.join(', ')})`}
            force={allForce}
          />
        </ConfirmButton>
      )}
    </div>
  );
}

function CheckAnswer({
  check,
  touched,
  what,
  force,
}: {
  check: Check;
  touched: Pick<Check, 'dependents' | 'schedules' | 'services'>;
  what: string;
  force: boolean;
}) {
  const nothing = touched.dependents.length + touched.schedules.length + touched.services.length === 0;
  return (
    <div data-testid="delete-check">
      <p>
        This deletes {what}: it disappears from listings, the directory and calls at once, and is purged after{' '}
        {check.retention_days} days.
      </p>
      {nothing ? (
        <p class="ok">Nothing depends on it: no agent pins it, no schedule or service runs it.</p>
      ) : (
        <>
          {touched.dependents.length > 0 && (
            <p>
              Pinned by {touched.dependents.length} agent{' '}
              {touched.dependents.length === 1 ? 'version' : 'versions'}: {touched.dependents.join(', ')}
            </p>
          )}
          {touched.schedules.length > 0 && (
            <p>
              Run by {touched.schedules.length} {touched.schedules.length === 1 ? 'schedule' : 'schedules'}:{' '}
              {touched.schedules.join(', ')}
            </p>
          )}
          {touched.services.length > 0 && (
            <p>
              Run by {touched.services.length} {touched.services.length === 1 ? 'service' : 'services'}:{' '}
              {touched.services.join(', ')}
            </p>
          )}
        </>
      )}
      {force && (
        <p class="bad">
          Deleting it needs force: {touched.dependents.length > 0 ? 'the agents pinning it break' : ''}
          {touched.dependents.length > 0 && touched.schedules.length + touched.services.length > 0
            ? ', and '
            : ''}
          {touched.schedules.length + touched.services.length > 0
            ? 'the schedules and services running it fail from then on'
            : ''}
          .
        </p>
      )}
    </div>
  );
}
