import { useQuery } from '@tanstack/react-query';
import { useSession } from './session.tsx';

/**
 * The chosen workspace's record (its name and the caller's role in it), from the same cached
 * `GET /workspaces` the switcher reads, so a page can offer owner-only actions to owners only.
 */
export function useChosenWorkspace() {
  const { client, workspaceId } = useSession();
  const workspaces = useQuery({ queryKey: ['workspaces'], queryFn: () => client.workspaces.list() });
  const list = workspaces.data?.workspaces ?? [];
  return {
    workspace: list.find((w) => w.id === workspaceId),
    /** The caller's org: a personal workspace's slug is its account's org. */
    ownOrg: list.find((w) => w.personal)?.slug,
  };
}
