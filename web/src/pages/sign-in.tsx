import { useMutation } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import type { AgentHostError } from '../../../sdk/src/errors.ts';
import { type AgentHostClient, clientFor } from '../api-client.ts';
import { ApiError } from '../api-error.tsx';

type Workspaces = Awaited<ReturnType<AgentHostClient['workspaces']['list']>>['workspaces'];

/**
 * Sign-in with an API key. The key is checked by asking for the caller's workspaces (the switcher
 * needs them anyway); a refused key shows the API's own error.
 */
export function SignIn({
  onSignedIn,
  refused,
}: {
  onSignedIn: (key: string, workspaces: Workspaces) => void;
  /** The API's refusal that ended the last session (a revoked key), to say why the user is here. */
  refused?: AgentHostError | null;
}) {
  const [key, setKey] = useState('');
  const signIn = useMutation({
    mutationFn: async (apiKey: string) => (await clientFor(apiKey).workspaces.list()).workspaces,
    onSuccess: (workspaces, apiKey) => onSignedIn(apiKey, workspaces),
  });
  return (
    <main class="sign-in">
      <h1>Sign in to agenthost</h1>
      {refused && (
        <div role="status" data-testid="signed-out-notice">
          <p>
            You were signed out: the API no longer accepts this tab's key (it may have been revoked). Sign in
            with another key.
          </p>
          <ApiError error={refused} />
        </div>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const trimmed = key.trim();
          if (trimmed) signIn.mutate(trimmed);
        }}
      >
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          required
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          aria-describedby="api-key-help"
        />
        <p id="api-key-help" class="muted">
          Kept in this tab only (session storage) until you sign out or close it. <code>npm start</code>{' '}
          prints the owner's key on its first start and the file it writes it to: <code>admin-api-key</code>{' '}
          in its data dir (<code>PLATFORM_DATA_DIR</code>, <code>.data</code> unless set).
        </p>
        <button type="submit" disabled={signIn.isPending}>
          {signIn.isPending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {signIn.isError && <ApiError error={signIn.error} title="Sign-in failed" />}
    </main>
  );
}
