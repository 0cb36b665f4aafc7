import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useMemo, useState } from 'preact/hooks';
import type { AgentHostError } from '../../sdk/src/errors.ts';
import { clientFor } from './api-client.ts';
import { ApiError } from './api-error.tsx';
import { PageErrorBoundary } from './components/page-error-boundary.tsx';
import { WorkspaceSwitcher } from './components/workspace-switcher.tsx';
import { useHashRoute } from './hash-route.ts';
import { SignIn } from './pages/sign-in.tsx';
import { matchPage, PAGES } from './pages.ts';
import { SessionContext } from './session.tsx';
import { sessionStore } from './session-store.ts';
import { useSignOutOnUnauthorized } from './sign-out-on-unauthorized.ts';

export function App() {
  const queryClient = useQueryClient();
  const [apiKey, setApiKey] = useState(sessionStore.key);
  // Why the last session ended, when it was not the user's choice (the API refused its key).
  const [refused, setRefused] = useState<AgentHostError | null>(null);
  const signOut = useCallback(
    (why: AgentHostError | null = null) => {
      sessionStore.clear();
      // Nothing one account saw stays in memory for the next one to sign in on this tab.
      queryClient.clear();
      setRefused(why);
      setApiKey(null);
    },
    [queryClient],
  );
  if (!apiKey) {
    return (
      <SignIn
        refused={refused}
        onSignedIn={(key, workspaces) => {
          sessionStore.setKey(key);
          queryClient.setQueryData(['workspaces'], { workspaces });
          setRefused(null);
          setApiKey(key);
        }}
      />
    );
  }
  return <SignedIn apiKey={apiKey} onSignOut={signOut} />;
}

function SignedIn({
  apiKey,
  onSignOut,
}: {
  apiKey: string;
  onSignOut: (why?: AgentHostError | null) => void;
}) {
  const client = useMemo(() => clientFor(apiKey), [apiKey]);
  useSignOutOnUnauthorized(onSignOut);
  const route = useHashRoute();
  const [chosen, setChosen] = useState(sessionStore.workspaceId);
  const workspaces = useQuery({ queryKey: ['workspaces'], queryFn: () => client.workspaces.list() });
  const list = workspaces.data?.workspaces ?? [];
  // The one chosen in this tab if the key still reaches it, else the personal one.
  const workspace = list.find((w) => w.id === chosen) ?? list.find((w) => w.personal) ?? list[0];
  const matched = matchPage(route);
  const page = matched?.page;

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top-bar">
        <span class="brand">agenthost</span>
        <nav aria-label="Pages">
          {PAGES.map((p) => (
            <a key={p.path} href={`#${p.path}`} aria-current={p === page ? 'page' : undefined}>
              {p.title}
            </a>
          ))}
        </nav>
        <div class="top-bar-end">
          {workspace && (
            <WorkspaceSwitcher
              workspaces={list}
              value={workspace.id}
              onChange={(id) => {
                sessionStore.setWorkspaceId(id);
                setChosen(id);
              }}
            />
          )}
          <button type="button" class="secondary" onClick={() => onSignOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {workspaces.isPending && <p aria-live="polite">Loading your workspaces…</p>}
        {workspaces.isError && <ApiError error={workspaces.error} title="Could not load your workspaces" />}
        {workspaces.isSuccess && !workspace && <p>This key reaches no workspace.</p>}
        {workspace && (
          <SessionContext.Provider value={{ client, workspaceId: workspace.id }}>
            {matched ? (
              // Keyed by the route so that a page that failed is tried afresh on the next one.
              <PageErrorBoundary key={route}>
                <matched.page.component params={matched.params} />
              </PageErrorBoundary>
            ) : (
              <section>
                <h1>Page not found</h1>
                <p>
                  There is no page at <code>{route}</code>. <a href="#/overview">Go to the overview</a>.
                </p>
              </section>
            )}
          </SessionContext.Provider>
        )}
      </main>
    </>
  );
}
