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
import { InviteForm, MyInvitations, PendingInvitations } from './invitations.tsx';

/**
 * The invitations addressed to the caller, the caller's workspaces (and a form to create one), and
 * the chosen workspace's members: owners invite (a pending invitation) and remove; anyone may leave. The API has no route to change a member's role, so the page
 * offers none.
 */
export function Workspace() {
  const { client } = useSession();
  const workspaces = useQuery({ queryKey: ['workspaces'], queryFn: () => client.workspaces.list() });
  const shown = useShownSlice(workspaces.data?.workspaces);

  return (
    <div class="workspace-page">
      <h1>Workspace</h1>

      <MyInvitations />

      <h2>Your workspaces</h2>
      <QueryState query={workspaces} what="your workspaces" />
      {workspaces.data && (
        <>
          <div class="table-scroll">
            <table data-testid="workspaces">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Slug</th>
                  <th scope="col">Your role</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {shown.items.map((w) => (
                  <tr key={w.id}>
                    <th scope="row">
                      {w.name}
                      {w.personal && <span class="badge">personal</span>}
                    </th>
                    <td>
                      <code>{w.slug}</code>
                    </td>
                    <td>{w.role}</td>
                    <td>{formatTime(w.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <LoadMore list={shown} />
        </>
      )}
      <CreateWorkspaceForm />

      <Members />
    </div>
  );
}

function CreateWorkspaceForm() {
  const { client } = useSession();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<string | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setCreated(null);
    try {
      const ws = await client.workspaces.create({
        name: name.trim(),
        ...(slug.trim() ? { slug: slug.trim() } : {}),
      });
      setName('');
      setSlug('');
      setCreated(ws.name);
      await queryClient.invalidateQueries({ queryKey: ['workspaces'] });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="stack" onSubmit={submit} aria-labelledby="create-workspace-heading">
      <h3 id="create-workspace-heading">Create a workspace</h3>
      <label>
        Name
        <input name="workspace-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Slug (optional)
        <input
          name="workspace-slug"
          spellcheck={false}
          autoComplete="off"
          value={slug}
          onInput={(e) => setSlug(e.currentTarget.value)}
          aria-describedby="workspace-slug-help"
        />
      </label>
      <p id="workspace-slug-help" class="muted">
        Unique across the platform; made from the name when left empty.
      </p>
      <div>
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create workspace'}
        </button>
      </div>
      {created && (
        <p role="status" class="ok">
          Created {created}; you are its owner. Choose it in the workspace menu to manage it.
        </p>
      )}
      {error !== null && <ApiError error={error} title="Could not create the workspace" />}
    </form>
  );
}

/** The chosen workspace's members with their roles, and the actions the caller's role allows. */
function Members() {
  const { client, workspaceId } = useSession();
  const { workspace, ownOrg } = useChosenWorkspace();
  const queryClient = useQueryClient();
  const members = useQuery({
    queryKey: ['members', workspaceId],
    queryFn: () => client.workspaces.members(workspaceId),
  });
  const shown = useShownSlice(members.data?.members);
  const isOwner = workspace?.role === 'owner';
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['members', workspaceId] });

  return (
    <section aria-labelledby="members-heading">
      <h2 id="members-heading">Members of {workspace?.name ?? 'this workspace'}</h2>
      <QueryState query={members} what="members" />
      {members.data && (
        <>
          <div class="table-scroll">
            <table data-testid="members">
              <thead>
                <tr>
                  <th scope="col">Org</th>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Account id</th>
                  <th scope="col">Joined</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {shown.items.map((m) => {
                  // Memberships list no "you"; the caller's org is their personal workspace's slug.
                  const self = m.org !== null && m.org === ownOrg;
                  const who = m.org ?? m.email ?? m.account_id;
                  return (
                    <tr key={m.account_id}>
                      <th scope="row">
                        {m.org ?? '—'}
                        {self && <span class="badge">you</span>}
                      </th>
                      <td>{m.email ?? '—'}</td>
                      <td>{m.role}</td>
                      <td>
                        <code>{m.account_id}</code>
                      </td>
                      <td>{formatTime(m.joined_at)}</td>
                      <td>
                        {self ? (
                          <ConfirmButton
                            label="Leave"
                            title={`Leave ${workspace?.name ?? 'this workspace'}?`}
                            onConfirm={async () => {
                              await client.workspaces.removeMember(workspaceId, m.account_id);
                              // The switcher then falls back to the personal workspace.
                              await queryClient.invalidateQueries({ queryKey: ['workspaces'] });
                            }}
                          >
                            <p>
                              You lose access to its secrets, schedules, services and tasks until an owner
                              invites you again and you accept.
                            </p>
                          </ConfirmButton>
                        ) : isOwner ? (
                          <ConfirmButton
                            label="Remove"
                            title={`Remove ${who} from ${workspace?.name ?? 'this workspace'}?`}
                            onConfirm={async () => {
                              await client.workspaces.removeMember(workspaceId, m.account_id);
                              await refresh();
                            }}
                          >
                            <p>They lose access to the workspace until an owner invites them again.</p>
                          </ConfirmButton>
                        ) : (
                          <span class="muted">—</span>
                        )}
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
      {isOwner ? (
        <>
          <PendingInvitations />
          <InviteForm />
        </>
      ) : (
        workspace && <p data-testid="invite-owners-only">Only the workspace's owners can invite members.</p>
      )}
    </section>
  );
}
