import { useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'preact/hooks';
import { AgentHostError } from '../../sdk/src/errors.ts';

/**
 * Ends the session when the API stops accepting its key (revoked on the API keys page, in another
 * tab or by the CLI): the first query or mutation answered 401 UNAUTHORIZED calls `onRefused`
 * with that error, so the tab signs out with a message instead of showing the error on every page.
 */
export function useSignOutOnUnauthorized(onRefused: (error: AgentHostError) => void): void {
  const queryClient = useQueryClient();
  useEffect(() => {
    const check = (error: unknown) => {
      if (error instanceof AgentHostError && error.status === 401) onRefused(error);
    };
    const stopQueries = queryClient.getQueryCache().subscribe((event) => {
      if (event.type === 'updated' && event.action.type === 'error') check(event.action.error);
    });
    const stopMutations = queryClient.getMutationCache().subscribe((event) => {
      if (event.type === 'updated' && event.action.type === 'error') check(event.action.error);
    });
    return () => {
      stopQueries();
      stopMutations();
    };
  }, [queryClient, onRefused]);
}
