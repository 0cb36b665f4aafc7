import { useQueryClient } from '@tanstack/react-query';
import type { ComponentChildren } from 'preact';
import { useErrorBoundary } from 'preact/hooks';
import { ApiError } from '../api-error.tsx';

/**
 * Catches what a page throws while rendering (an answer shaped other than the page expects, a bug)
 * and shows it as an error with a way back, instead of Preact unmounting the page into a blank
 * one. Errors in queries are shown by the pages themselves; this is the net under them.
 */
export function PageErrorBoundary({ children }: { children: ComponentChildren }) {
  const [error, reset] = useErrorBoundary();
  const queryClient = useQueryClient();
  if (error) {
    return (
      <section>
        <h1>This page failed</h1>
        <ApiError error={error} title="The page could not be shown" />
        <button
          type="button"
          class="secondary"
          onClick={() => {
            // What the page read may be what it could not show: read it again, then render anew.
            void queryClient.resetQueries();
            reset();
          }}
        >
          Try again
        </button>
      </section>
    );
  }
  return <>{children}</>;
}
