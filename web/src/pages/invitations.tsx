import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import type { AgentHostClient } from '../api-client.ts';
import { ApiError } from '../api-error.tsx';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { formatTime } from '../format.ts';
import { useSession } from '../session.tsx';

/*
 * Workspace invitations (docs/roles.md, "Invitations"): an owner's invite is only an invitation,
 * and the account it is addressed to joins by accepting it here (or declines it). Owners see their
 * workspace's pending invitations and withdraw them.
 */

type Invitation = Awaited<ReturnType<AgentHostClient['invitations']['list']>>['invitations'][number];

/** Who an invitation is addressed to, as the inviter gave it. */
const addressee = (i: Invitation) => i.email ?? i.account_id ?? '—';

/** The invitations addressed to the caller, each with Accept and Decline. Nothing when there are none. */
export function MyInvitations() {
  const { client } = useSession();
  const queryClient = useQueryClient();
  const invitations = useQuery({ queryKey: ['my-invitations'], queryFn: () => client.invitations.list() });
  const [error, setError] = useState<unknown>(null);
  const [answered, setAnswered] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const pending = invitations.data?.invitations ?? [];
  if (pending.length === 0 && answered === null && error === null) return null;

  const answer = async (i: Invitation, how: 'accept' | 'decline') => {
    setBusy(i.id);
    setError(null);
    setAnswered(null);
    try {
      if (how === 'accept') {
        const ws = await client.invitations.accept(i.id);
        setAnswered(`You joined ${ws.name} as ${ws.role}. Choose it in the workspace menu.`);
        await queryClient.invalidateQueries({ queryKey: ['workspaces'] });
      } else {
        await client.invitations.decline(i.id);
        setAnswered(`You declined the invitation to ${i.workspace.name}.`);
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
      await queryClient.invalidateQueries({ queryKey: ['my-invitations'] });
    }
  };

  return (
    <section aria-labelledby="my-invitations-heading">
      <h2 id="my-invitations-heading">Invitations to you</h2>
      {pending.length > 0 && (
        <div class="table-scroll">
          <table data-testid="my-invitations">
            <thead>
              <tr>
                <th scope="col">Workspace</th>
                <th scope="col">Role</th>
                <th scope="col">Invited by</th>
                <th scope="col">Expires</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {pending.map((i) => (
                <tr key={i.id}>
                  <th scope="row">
                    {i.workspace.name} <code>{i.workspace.slug}</code>
                  </th>
                  <td>{i.role}</td>
                  <td>{i.invited_by.org ?? i.invited_by.account_id}</td>
                  <td>{formatTime(i.expires_at)}</td>
                  <td>
                    <button type="button" disabled={busy !== null} onClick={() => answer(i, 'accept')}>
                      Accept
                    </button>{' '}
                    <button type="button" disabled={busy !== null} onClick={() => answer(i, 'decline')}>
                      Decline
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="muted">
        Accepting makes you a member: you see the workspace's secrets' names, tasks, schedules and services,
        and its agents become tools of your MCP clients.
      </p>
      {answered && (
        <p role="status" class="ok">
          {answered}
        </p>
      )}
      {error !== null && <ApiError error={error} title="Could not answer the invitation" />}
    </section>
  );
}

/** The chosen workspace's pending invitations (owners), each with Revoke. */
export function PendingInvitations() {
  const { client, workspaceId } = useSession();
  const queryClient = useQueryClient();
  const invitations = useQuery({
    queryKey: ['invitations', workspaceId],
    queryFn: () => client.workspaces.invitations(workspaceId),
  });
  const pending = invitations.data?.invitations ?? [];
  if (pending.length === 0) return null;
  return (
    <>
      <h3 id="pending-invitations-heading">Pending invitations</h3>
      <div class="table-scroll">
        <table data-testid="pending-invitations" aria-labelledby="pending-invitations-heading">
          <thead>
            <tr>
              <th scope="col">Invited</th>
              <th scope="col">Role</th>
              <th scope="col">Invited by</th>
              <th scope="col">Expires</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {pending.map((i) => (
              <tr key={i.id}>
                <th scope="row">
                  <code>{addressee(i)}</code>
                </th>
                <td>{i.role}</td>
                <td>{i.invited_by.org ?? i.invited_by.account_id}</td>
                <td>{formatTime(i.expires_at)}</td>
                <td>
                  <ConfirmButton
                    label="Revoke"
                    title={`Revoke the invitation of ${addressee(i)}?`}
                    onConfirm={async () => {
                      await client.workspaces.revokeInvitation(workspaceId, i.id);
                      await queryClient.invalidateQueries({ queryKey: ['invitations', workspaceId] });
                    }}
                  >
                    <p>It can no longer be accepted. You may invite them again.</p>
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** One field for either an email or an account id: an `@` tells them apart. */
export function InviteForm() {
  const { client, workspaceId } = useSession();
  const queryClient = useQueryClient();
  const [who, setWho] = useState('');
  const [role, setRole] = useState<'member' | 'owner'>('member');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [invited, setInvited] = useState<string | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setInvited(null);
    const target = who.trim();
    try {
      const invitation = await client.workspaces.invite(
        workspaceId,
        target.includes('@') ? { email: target, role } : { account_id: target, role },
      );
      setWho('');
      setInvited(`${addressee(invitation)} (${invitation.role})`);
      await queryClient.invalidateQueries({ queryKey: ['invitations', workspaceId] });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="stack" onSubmit={submit} aria-labelledby="invite-heading">
      <h3 id="invite-heading">Invite a member</h3>
      <label>
        Email or account id
        <input
          name="invite-who"
          required
          spellcheck={false}
          autoComplete="off"
          value={who}
          onInput={(e) => setWho(e.currentTarget.value)}
          aria-describedby="invite-help"
        />
      </label>
      <p id="invite-help" class="muted">
        They join when they accept the invitation (on their Workspace page, or with{' '}
        <code>agenthost invitations accept</code>). It expires after 14 days.
      </p>
      <label>
        Role
        <select
          name="invite-role"
          value={role}
          onChange={(e) => setRole(e.currentTarget.value === 'owner' ? 'owner' : 'member')}
        >
          <option value="member">member</option>
          <option value="owner">owner</option>
        </select>
      </label>
      <div>
        <button type="submit" disabled={busy}>
          {busy ? 'Inviting…' : 'Invite'}
        </button>
      </div>
      {invited && (
        <p role="status" class="ok">
          Invited {invited}: pending until they accept.
        </p>
      )}
      {error !== null && <ApiError error={error} title="Could not invite" />}
    </form>
  );
}
