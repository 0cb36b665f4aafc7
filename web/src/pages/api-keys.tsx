import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import { ApiError } from '../api-error.tsx';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { CopyButton } from '../components/copy-button.tsx';
import { LoadMore } from '../components/load-more.tsx';
import { QueryState } from '../components/query-state.tsx';
import { useShownSlice } from '../components/shown-slice.ts';
import { formatTime } from '../format.ts';
import { useSession } from '../session.tsx';
import { sessionStore } from '../session-store.ts';

/**
 * Whether a listed key is the one this tab is signed in with. The list gives only a prefix
 * (`ahk_` and 6 characters, then `…`): 36 random bits, so two keys of one account sharing it is
 * not a worry worth a request.
 */
function isThisTabsKey(prefix: string): boolean {
  const start = prefix.replace(/…$/, '');
  return sessionStore.key()?.startsWith(start) ?? false;
}

/**
 * The account's API keys: name, prefix, agent, created (the API keeps no "last used"). A new key
 * is shown once, held only in this component's state: leaving the page or reloading forgets it.
 */
export function ApiKeys() {
  const { client } = useSession();
  const queryClient = useQueryClient();
  const keys = useQuery({ queryKey: ['api-keys'], queryFn: () => client.apiKeys.list() });
  const shown = useShownSlice(keys.data?.api_keys);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['api-keys'] });

  return (
    <div class="api-keys-page">
      <h1>API keys</h1>
      <p class="muted">
        The keys of your account; each reaches every workspace you are a member of. A key is shown once, when
        it is created.
      </p>

      <CreateKeyForm onCreated={refresh} />

      <h2>Your keys</h2>
      <QueryState query={keys} what="API keys" />
      {keys.data && (
        <>
          <div class="table-scroll">
            <table data-testid="api-keys">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Agent</th>
                  <th scope="col">Created</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {shown.items.map((k) => {
                  const mine = isThisTabsKey(k.prefix);
                  return (
                    <tr key={k.id}>
                      <th scope="row">
                        {k.name}
                        {mine && <span class="badge">this browser</span>}
                      </th>
                      <td>
                        <code>{k.prefix}</code>
                      </td>
                      <td>{k.agent ?? '—'}</td>
                      <td>{formatTime(k.created_at)}</td>
                      <td>
                        <ConfirmButton
                          label="Revoke"
                          title={`Revoke the key ${k.name} (${k.prefix})?`}
                          onConfirm={async () => {
                            await client.apiKeys.delete(k.id);
                            // For this tab's own key, this next request is refused: the app then
                            // signs out with the API's UNAUTHORIZED (sign-out-on-unauthorized.ts).
                            await refresh();
                          }}
                        >
                          <p>Anything using it is refused from the next request on. This cannot be undone.</p>
                          {mine && (
                            <p class="warning" role="alert">
                              This is the key this browser is signed in with: revoking it signs you out.
                            </p>
                          )}
                        </ConfirmButton>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          <LoadMore list={shown} />
        </>
      )}
    </div>
  );
}

/** Name and optional agent; the answer's key goes to component state only (no cache, no storage). */
function CreateKeyForm({ onCreated }: { onCreated: () => unknown }) {
  const { client } = useSession();
  const [name, setName] = useState('');
  const [agent, setAgent] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const result = await client.apiKeys.create({
        ...(name.trim() ? { name: name.trim() } : {}),
        ...(agent.trim() ? { agent: agent.trim() } : {}),
      });
      setCreated({ name: result.name, key: result.api_key });
      setName('');
      setAgent('');
      await onCreated();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="create-key-heading">
      <h2 id="create-key-heading">Create a key</h2>
      {created && (
        <div class="shown-once" data-testid="new-api-key">
          <p>
            <strong>The new key {created.name}</strong>: copy it now.{' '}
            <strong>You will not see it again</strong> — not after leaving this page or reloading it.
          </p>
          <p>
            <code>{created.key}</code>
          </p>
          <div class="toolbar">
            <CopyButton value={created.key} label="Copy key" />
            <button type="button" class="secondary" onClick={() => setCreated(null)}>
              I have stored it
            </button>
          </div>
        </div>
      )}
      <form class="stack" onSubmit={submit}>
        <label>
          Name
          <input
            name="key-name"
            autoComplete="off"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            placeholder="laptop, ci, …"
          />
        </label>
        <label>
          Agent (optional)
          <input
            name="key-agent"
            autoComplete="off"
            spellcheck={false}
            value={agent}
            onInput={(e) => setAgent(e.currentTarget.value)}
            aria-describedby="key-agent-help"
          />
        </label>
        <p id="key-agent-help" class="muted">
          For a key an agent uses: tasks it creates record this agent name as their creator.
        </p>
        <div>
          <button type="submit" disabled={busy}>
            {busy ? 'Creating…' : 'Create key'}
          </button>
        </div>
        {error !== null && <ApiError error={error} title="Could not create the key" />}
      </form>
    </section>
  );
}
