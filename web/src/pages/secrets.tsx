import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import { ApiError } from '../api-error.tsx';
import { useChosenWorkspace } from '../chosen-workspace.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { LoadMore } from '../components/load-more.tsx';
import { QueryState } from '../components/query-state.tsx';
import { useShownSlice } from '../components/shown-slice.ts';
import { formatTime } from '../format.ts';
import { useSession } from '../session.tsx';

/**
 * The chosen workspace's secrets, by name: the API never returns a value, and this page never
 * shows one back. Owners set (create or replace) and delete them; members see the names.
 */
export function Secrets() {
  const { client, workspaceId } = useSession();
  const { workspace } = useChosenWorkspace();
  const queryClient = useQueryClient();
  const secrets = useQuery({
    queryKey: ['secrets', workspaceId],
    queryFn: () => client.secrets.list(workspaceId),
  });
  const shown = useShownSlice(secrets.data?.secrets);
  const isOwner = workspace?.role === 'owner';
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['secrets', workspaceId] });

  return (
    <div class="secrets-page">
      <h1>Secrets</h1>
      <p class="muted">
        Secrets of <strong>{workspace?.name ?? 'this workspace'}</strong>, given to its agents' runs as
        environment variables. Only names are listed: a value cannot be read back, only replaced.
      </p>

      {isOwner ? (
        <SetSecretForm workspaceId={workspaceId} onSaved={refresh} />
      ) : (
        <p>Only the workspace's owners can set or delete secrets; you are a member here.</p>
      )}

      <h2>Names</h2>
      <QueryState query={secrets} what="secrets" />
      {secrets.data &&
        (secrets.data.secrets.length === 0 ? (
          <p>No secrets in this workspace.</p>
        ) : (
          <>
            <div class="table-scroll">
              <table data-testid="secrets">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Created</th>
                    <th scope="col">Updated</th>
                    {isOwner && <th scope="col">Actions</th>}
                  </tr>
                </thead>
                <tbody>
                  {shown.items.map((s) => (
                    <tr key={s.name}>
                      <th scope="row">
                        <code>{s.name}</code>
                      </th>
                      <td>{formatTime(s.created_at)}</td>
                      <td>{formatTime(s.updated_at)}</td>
                      {isOwner && (
                        <td>
                          <ConfirmButton
                            label="Delete"
                            title={`Delete the secret ${s.name}?`}
                            onConfirm={async () => {
                              await client.secrets.delete(workspaceId, s.name);
                              await refresh();
                            }}
                          >
                            <p>
                              Runs that need <code>{s.name}</code> will fail until it is set again. The value
                              cannot be recovered.
                            </p>
                          </ConfirmButton>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <LoadMore list={shown} />
          </>
        ))}
    </div>
  );
}

/**
 * Name and value; the value is typed into a password field and cleared once stored. It is sent
 * with a plain call, not a TanStack mutation, so no cache keeps it after the request.
 */
function SetSecretForm({ workspaceId, onSaved }: { workspaceId: string; onSaved: () => unknown }) {
  const { client } = useSession();
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<{ name: string; created: boolean } | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      const result = await client.secrets.put(workspaceId, { name: name.trim(), value });
      setValue('');
      setName('');
      setSaved({ name: result.name, created: result.created });
      await onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="stack" onSubmit={submit} aria-labelledby="set-secret-heading">
      <h2 id="set-secret-heading">Set a secret</h2>
      <label>
        Name
        <input
          name="secret-name"
          required
          autoComplete="off"
          spellcheck={false}
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
          aria-describedby="secret-name-help"
        />
      </label>
      <p id="secret-name-help" class="muted">
        An environment variable name, such as <code>OPENAI_API_KEY</code>. An existing name is replaced.
      </p>
      <label>
        Value
        <input
          name="secret-value"
          type="password"
          required
          autoComplete="off"
          spellcheck={false}
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
        />
      </label>
      <div>
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save secret'}
        </button>
      </div>
      {saved && (
        <p role="status" class="ok">
          {saved.created ? 'Created' : 'Replaced'} <code>{saved.name}</code>. Its value is not shown again.
        </p>
      )}
      {error !== null && <ApiError error={error} title="Could not save the secret" />}
    </form>
  );
}
