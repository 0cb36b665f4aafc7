import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { memberKeys } from '../../functions/core/workspaces/member-record.ts';
import { workspaceKeys } from '../../functions/core/workspaces/workspace-record.ts';
import { joinWorkspace } from '../helpers/membership.ts';
import { BACKENDS, errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/**
 * Workspace invitations end to end over HTTP, from the invited account's side and the attacker's
 * (docs/roles.md, "Invitations"): an owner's invite is a pending invitation, not a membership; only
 * the account it is addressed to accepts or declines it; an invite never reveals an email.
 */

type Workspace = { id: string; name: string; slug: string; role: string };
type Member = { account_id: string; email: string | null; role: string };
type Invitation = {
  id: string;
  workspace: { id: string; name: string; slug: string };
  role: string;
  account_id: string | null;
  email: string | null;
  invited_by: { account_id: string; org: string | null };
  created_at: string;
  expires_at: string;
};

for (const backend of BACKENDS) {
  describe(`workspace invitations (end to end over HTTP, ${backend} store)`, () => {
    let p: TestPlatform;
    before(async () => {
      p = await startTestPlatform({}, backend, {}, { inMemory: true });
    });
    after(() => p.close());

    const account = async (org: string, email?: string) => {
      const c = await createAccount(p.deps, { org, tier: 'pro', ...(email ? { email } : {}) });
      return { key: c.api_key, id: c.account.id, personal: c.workspace_id };
    };

    it('an invite by account id is a pending invitation: no membership, and no email, until it is accepted', async () => {
      const owner = await account('inv-owner');
      const victim = await account('inv-victim', 'victim@example.test');
      const outsider = await account('inv-outsider', 'outsider@example.test');
      const ws = (
        await p.request<Workspace>('POST', '/workspaces', { key: owner.key, body: { name: 'Lure' } })
      ).body;
      await p.request('PUT', `/workspaces/${ws.id}/secrets`, {
        key: owner.key,
        body: { name: 'LURE_SECRET', value: 'lure-value' },
      });

      const invited = await p.request<Invitation>('POST', `/workspaces/${ws.id}/invite`, {
        key: owner.key,
        body: { account_id: victim.id },
      });
      assert.equal(invited.status, 201, invited.text);
      assert.equal(invited.body.account_id, victim.id);
      assert.equal(invited.body.email, null);
      assert.equal(invited.body.role, 'member');
      assert.deepEqual(invited.body.workspace, { id: ws.id, name: 'Lure', slug: ws.slug });
      assert.deepEqual(invited.body.invited_by, { account_id: owner.id, org: 'inv-owner' });
      assert.ok(!invited.text.includes('victim@example.test'), 'the answer never shows the account’s email');
      assert.equal(
        Date.parse(invited.body.expires_at) - Date.parse(invited.body.created_at),
        14 * 86_400_000,
      );
      const { metadata: _, ...invitation } = invited.body as Invitation & { metadata: unknown };

      // The invited account is no member: it sees nothing of the workspace.
      const mine = await p.request<{ workspaces: Workspace[] }>('GET', '/workspaces', { key: victim.key });
      assert.ok(!mine.body.workspaces.some((w) => w.id === ws.id));
      for (const path of [
        `/workspaces/${ws.id}/members`,
        `/workspaces/${ws.id}/tasks`,
        `/workspaces/${ws.id}/secrets`,
      ]) {
        const res = await p.request('GET', path, { key: victim.key });
        assert.equal(res.status, 404, path);
      }
      const members = await p.request<{ members: Member[] }>('GET', `/workspaces/${ws.id}/members`, {
        key: owner.key,
      });
      assert.deepEqual(
        members.body.members.map((m) => m.account_id),
        [owner.id],
      );

      // It sees the invitation addressed to it; the owners see it pending; nobody else does.
      const pending = await p.request<{ invitations: Invitation[] }>('GET', '/invitations', {
        key: victim.key,
      });
      assert.equal(pending.status, 200);
      assert.deepEqual(pending.body.invitations, [invitation]);
      const owners = await p.request<{ invitations: Invitation[] }>(
        'GET',
        `/workspaces/${ws.id}/invitations`,
        {
          key: owner.key,
        },
      );
      assert.deepEqual(owners.body.invitations, [invitation]);
      const others = await p.request<{ invitations: Invitation[] }>('GET', '/invitations', {
        key: outsider.key,
      });
      assert.deepEqual(others.body.invitations, []);

      // Someone else's invitation cannot be accepted or declined: it is not found for them.
      for (const action of ['accept', 'decline']) {
        const res = await p.request('POST', `/invitations/${invited.body.id}/${action}`, {
          key: outsider.key,
        });
        assert.equal(res.status, 404, action);
        assert.equal(errorOf(res).code, 'NOT_FOUND');
      }
      const byOwner = await p.request('POST', `/invitations/${invited.body.id}/accept`, { key: owner.key });
      assert.equal(byOwner.status, 404, 'the inviter cannot accept for the invitee');

      const accepted = await p.request<Workspace>('POST', `/invitations/${invited.body.id}/accept`, {
        key: victim.key,
      });
      assert.equal(accepted.status, 200, accepted.text);
      assert.equal(accepted.body.id, ws.id);
      assert.equal(accepted.body.role, 'member');
      const secrets = await p.request('GET', `/workspaces/${ws.id}/secrets`, { key: victim.key });
      assert.equal(secrets.status, 200, 'after accepting, a member');
      const task = await p.request('POST', '/tasks', {
        key: victim.key,
        body: { title: 'shared work', workspace_id: ws.id },
      });
      assert.equal(task.status, 201, 'members work on the workspace’s tasks');
      const joined = await p.request<{ workspaces: Workspace[] }>('GET', '/workspaces', { key: victim.key });
      assert.equal(joined.body.workspaces.find((w) => w.id === ws.id)?.role, 'member');

      const gone = await p.request<{ invitations: Invitation[] }>('GET', '/invitations', { key: victim.key });
      assert.deepEqual(gone.body.invitations, []);
      const twice = await p.request('POST', `/invitations/${invited.body.id}/accept`, { key: victim.key });
      assert.equal(twice.status, 404, 'an accepted invitation is answered');

      const memberLists = await p.request('GET', `/workspaces/${ws.id}/invitations`, { key: victim.key });
      assert.equal(memberLists.status, 403, 'a member is no owner');
      const memberInvites = await p.request('POST', `/workspaces/${ws.id}/invite`, {
        key: victim.key,
        body: { account_id: outsider.id },
      });
      assert.equal(memberInvites.status, 403);
      const again = await p.request('POST', `/workspaces/${ws.id}/invite`, {
        key: owner.key,
        body: { account_id: victim.id },
      });
      assert.equal(again.status, 409);
      assert.match(errorOf(again).message, /already a member/);
    });

    it('an invite by email answers alike whether or not an account has it; only that account sees it', async () => {
      const owner = await account('mail-owner');
      const alice = await account('mail-alice', 'alice@example.test');
      const bob = await account('mail-bob', 'bob@example.test');
      const ws = (
        await p.request<Workspace>('POST', '/workspaces', { key: owner.key, body: { name: 'Mail' } })
      ).body;
      const toAlice = await p.request<Invitation>('POST', `/workspaces/${ws.id}/invite`, {
        key: owner.key,
        body: { email: 'ALICE@example.test', role: 'owner' },
      });
      const toNobody = await p.request<Invitation>('POST', `/workspaces/${ws.id}/invite`, {
        key: owner.key,
        body: { email: 'nobody@example.test' },
      });
      for (const [res, email] of [
        [toAlice, 'alice@example.test'],
        [toNobody, 'nobody@example.test'],
      ] as const) {
        assert.equal(res.status, 201, res.text);
        assert.equal(res.body.email, email);
        assert.equal(res.body.account_id, null, 'no account id: whether one has the email stays unknown');
        assert.deepEqual(Object.keys(res.body).sort(), Object.keys(toAlice.body).sort());
      }
      assert.ok(!toAlice.text.includes(alice.id));

      const bobs = await p.request<{ invitations: Invitation[] }>('GET', '/invitations', { key: bob.key });
      assert.deepEqual(bobs.body.invitations, []);
      const bobAccepts = await p.request('POST', `/invitations/${toAlice.body.id}/accept`, { key: bob.key });
      assert.equal(bobAccepts.status, 404);

      const alices = await p.request<{ invitations: Invitation[] }>('GET', '/invitations', {
        key: alice.key,
      });
      assert.deepEqual(
        alices.body.invitations.map((i) => i.id),
        [toAlice.body.id],
      );
      const accepted = await p.request<Workspace>('POST', `/invitations/${toAlice.body.id}/accept`, {
        key: alice.key,
      });
      assert.equal(accepted.status, 200, accepted.text);
      assert.equal(accepted.body.role, 'owner');
      const memberEmail = await p.request('POST', `/workspaces/${ws.id}/invite`, {
        key: owner.key,
        body: { email: 'alice@example.test' },
      });
      assert.equal(memberEmail.status, 409, 'a member’s email, which the members list shows, is refused');
      // With a second owner by acceptance, the first may leave: the owner count followed.
      const leaves = await p.request('DELETE', `/workspaces/${ws.id}/members/${owner.id}`, {
        key: owner.key,
      });
      assert.equal(leaves.status, 204, leaves.text);
      const lastOwner = await p.request('DELETE', `/workspaces/${ws.id}/members/${alice.id}`, {
        key: alice.key,
      });
      assert.equal(lastOwner.status, 409);

      const listPending = () =>
        p.request<{ invitations: Invitation[] }>('GET', `/workspaces/${ws.id}/invitations`, {
          key: alice.key,
        });
      // The invitation the owner sent went with it (docs/roles.md): the remaining owner invites anew.
      assert.deepEqual((await listPending()).body.invitations, []);
      const reinvited = await p.request<Invitation>('POST', `/workspaces/${ws.id}/invite`, {
        key: alice.key,
        body: { email: 'nobody@example.test' },
      });
      assert.equal(reinvited.status, 201, reinvited.text);
      assert.equal(reinvited.body.id, toNobody.body.id, 'the same addressee, the same id');
      assert.deepEqual(
        (await listPending()).body.invitations.map((i) => i.email),
        ['nobody@example.test'],
      );
      const revoked = await p.request('DELETE', `/workspaces/${ws.id}/invitations/${toNobody.body.id}`, {
        key: alice.key,
      });
      assert.equal(revoked.status, 204);
      const none = await p.request<{ invitations: Invitation[] }>('GET', `/workspaces/${ws.id}/invitations`, {
        key: alice.key,
      });
      assert.deepEqual(none.body.invitations, []);
    });

    it('a decline leaves no membership; invitations expire; bad invites are refused', async () => {
      const owner = await account('dec-owner');
      const carol = await account('dec-carol');
      const ws = (
        await p.request<Workspace>('POST', '/workspaces', { key: owner.key, body: { name: 'Decline' } })
      ).body;
      const invite = () =>
        p.request<Invitation>('POST', `/workspaces/${ws.id}/invite`, {
          key: owner.key,
          body: { account_id: carol.id },
        });
      const first = await invite();
      assert.equal(first.status, 201);
      const twice = await invite();
      assert.equal(twice.status, 409, 'one pending invitation per account');
      assert.match(errorOf(twice).message, /pending invitation/);

      const declined = await p.request('POST', `/invitations/${first.body.id}/decline`, { key: carol.key });
      assert.equal(declined.status, 204);
      const members = await p.request('GET', `/workspaces/${ws.id}/members`, { key: carol.key });
      assert.equal(members.status, 404, 'a decline makes no membership');
      const late = await p.request('POST', `/invitations/${first.body.id}/accept`, { key: carol.key });
      assert.equal(late.status, 404, 'a declined invitation cannot be accepted');

      const second = await invite();
      assert.equal(second.status, 201, 'after a decline the owner may invite again');
      p.clock.advance(14 * 86_400_000 + 1000);
      const expired = await p.request('POST', `/invitations/${second.body.id}/accept`, { key: carol.key });
      assert.equal(expired.status, 404, 'an expired invitation cannot be accepted');
      const listed = await p.request<{ invitations: Invitation[] }>('GET', '/invitations', {
        key: carol.key,
      });
      assert.deepEqual(listed.body.invitations, []);

      const unknownId = await p.request('POST', `/workspaces/${ws.id}/invite`, {
        key: owner.key,
        body: { account_id: '00000000-0000-4000-8000-000000000000' },
      });
      assert.equal(unknownId.status, 404);
      assert.match(errorOf(unknownId).message, /No account has the id/);
      for (const body of [
        {},
        { account_id: carol.id, email: 'a@b.test' },
        { email: 'not-an-email' },
        { account_id: carol.id, role: 'admin' },
      ]) {
        const res = await p.request('POST', `/workspaces/${ws.id}/invite`, { key: owner.key, body });
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(errorOf(res).code, 'INVALID_INPUT');
      }
      for (const id of ['not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
        const res = await p.request('POST', `/invitations/${id}/accept`, { key: carol.key });
        assert.equal(res.status, 404, id);
      }
    });

    it('a removed owner’s pending invitations are withdrawn: its second account cannot come back as owner', async () => {
      const original = await account('wd-original');
      const attacker = await account('wd-attacker');
      const second = await account('wd-second');
      const bystander = await account('wd-bystander');
      const ws = (
        await p.request<Workspace>('POST', '/workspaces', { key: original.key, body: { name: 'Withdrawn' } })
      ).body;
      await joinWorkspace(p.request, ws.id, original.key, attacker, { role: 'owner' });
      // While an owner, the attacker invites its own second account as owner, and a bystander as member.
      const toSecond = await p.request<Invitation>('POST', `/workspaces/${ws.id}/invite`, {
        key: attacker.key,
        body: { account_id: second.id, role: 'owner' },
      });
      assert.equal(toSecond.status, 201, toSecond.text);
      const toBystander = await p.request<Invitation>('POST', `/workspaces/${ws.id}/invite`, {
        key: attacker.key,
        body: { account_id: bystander.id },
      });
      assert.equal(toBystander.status, 201, toBystander.text);

      const removed = await p.request('DELETE', `/workspaces/${ws.id}/members/${attacker.id}`, {
        key: original.key,
      });
      assert.equal(removed.status, 204, removed.text);

      // The invitations are withdrawn: not listed for their addressees nor for the owners...
      const inbox = await p.request<{ invitations: Invitation[] }>('GET', '/invitations', {
        key: second.key,
      });
      assert.deepEqual(inbox.body.invitations, []);
      const pending = await p.request<{ invitations: Invitation[] }>(
        'GET',
        `/workspaces/${ws.id}/invitations`,
        { key: original.key },
      );
      assert.deepEqual(pending.body.invitations, []);
      // ... and not accepted.
      const accepted = await p.request('POST', `/invitations/${toSecond.body.id}/accept`, {
        key: second.key,
      });
      assert.equal(accepted.status, 404, accepted.text);
      const joined = await p.request('POST', `/invitations/${toBystander.body.id}/accept`, {
        key: bystander.key,
      });
      assert.equal(joined.status, 404, joined.text);

      // The second account is no member, so it cannot remove the original owner.
      const members = await p.request('GET', `/workspaces/${ws.id}/members`, { key: second.key });
      assert.equal(members.status, 404);
      const coup = await p.request('DELETE', `/workspaces/${ws.id}/members/${original.id}`, {
        key: second.key,
      });
      assert.equal(coup.status, 404);
      const still = await p.request<{ members: Member[] }>('GET', `/workspaces/${ws.id}/members`, {
        key: original.key,
      });
      assert.deepEqual(
        still.body.members.map((m) => [m.account_id, m.role]),
        [[original.id, 'owner']],
      );
      // The withdrawn invitation is gone: the remaining owner may invite the account again.
      const again = await p.request('POST', `/workspaces/${ws.id}/invite`, {
        key: original.key,
        body: { account_id: second.id },
      });
      assert.equal(again.status, 201, again.text);
    });

    it('an owner who leaves withdraws its pending invitations too', async () => {
      const original = await account('lv-original');
      const leaver = await account('lv-leaver');
      const invitee = await account('lv-invitee');
      const ws = (
        await p.request<Workspace>('POST', '/workspaces', { key: original.key, body: { name: 'Leaving' } })
      ).body;
      await joinWorkspace(p.request, ws.id, original.key, leaver, { role: 'owner' });
      const invited = await p.request<Invitation>('POST', `/workspaces/${ws.id}/invite`, {
        key: leaver.key,
        body: { account_id: invitee.id, role: 'owner' },
      });
      assert.equal(invited.status, 201, invited.text);
      const left = await p.request('DELETE', `/workspaces/${ws.id}/members/${leaver.id}`, {
        key: leaver.key,
      });
      assert.equal(left.status, 204, left.text);
      const accepted = await p.request('POST', `/invitations/${invited.body.id}/accept`, {
        key: invitee.key,
      });
      assert.equal(accepted.status, 404, accepted.text);
    });

    it('an accept checks its inviter is an owner still, also where its invitations were not withdrawn', async () => {
      const original = await account('chk-original');
      const attacker = await account('chk-attacker');
      const second = await account('chk-second');
      const ws = (
        await p.request<Workspace>('POST', '/workspaces', { key: original.key, body: { name: 'Checked' } })
      ).body;
      await joinWorkspace(p.request, ws.id, original.key, attacker, { role: 'owner' });
      const invited = await p.request<Invitation>('POST', `/workspaces/${ws.id}/invite`, {
        key: attacker.key,
        body: { account_id: second.id, role: 'owner' },
      });
      assert.equal(invited.status, 201, invited.text);
      // The attacker's membership gone with its invitation left in place, as a removal whose
      // withdrawal of invitations never ran (the process stopped in between).
      await p.deps.store.transactWrite([
        { delete: memberKeys.member(ws.id, attacker.id) },
        { update: workspaceKeys.workspace(ws.id), spec: { add: { owner_count: -1 } } },
      ]);
      const accepted = await p.request('POST', `/invitations/${invited.body.id}/accept`, { key: second.key });
      assert.equal(accepted.status, 404, accepted.text);
      assert.match(errorOf(accepted).message, /withdrawn/);
      const members = await p.request('GET', `/workspaces/${ws.id}/members`, { key: second.key });
      assert.equal(members.status, 404, 'no membership was made');
      const inbox = await p.request<{ invitations: Invitation[] }>('GET', '/invitations', {
        key: second.key,
      });
      assert.deepEqual(inbox.body.invitations, [], 'and the invitation is gone');
    });

    it('bounds an account’s pending invitations by its tier, also when its invites race; answered or expired ones free their place', async () => {
      const c = await createAccount(p.deps, { org: 'lim-spammer', tier: 'free' });
      const spammer = { key: c.api_key, id: c.account.id };
      const ws = (
        await p.request<Workspace>('POST', '/workspaces', { key: spammer.key, body: { name: 'Spam' } })
      ).body;
      const invite = (email: string) =>
        p.request<Invitation>('POST', `/workspaces/${ws.id}/invite`, { key: spammer.key, body: { email } });
      // A free account has 20 pending invitations at a time: 30 racing invites make 20.
      const sent = await Promise.all(Array.from({ length: 30 }, (_, i) => invite(`lim-${i}@example.test`)));
      const statuses = sent.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 201).length, 20, statuses.join());
      for (const refused of sent.filter((r) => r.status !== 201)) {
        assert.equal(refused.status, 403, refused.text);
        assert.equal(errorOf(refused).code, 'FORBIDDEN');
        assert.match(errorOf(refused).message, /free plan allows 20 pending invitations/);
      }
      const pending = await p.request<{ invitations: Invitation[]; total: number }>(
        'GET',
        `/workspaces/${ws.id}/invitations`,
        { key: spammer.key },
      );
      assert.equal(pending.body.total, 20);

      // A revoked invitation frees its place.
      const first = sent.find((r) => r.status === 201);
      assert.ok(first);
      const revoked = await p.request('DELETE', `/workspaces/${ws.id}/invitations/${first.body.id}`, {
        key: spammer.key,
      });
      assert.equal(revoked.status, 204);
      assert.equal((await invite('lim-after-revoke@example.test')).status, 201);
      const target = await createAccount(p.deps, { org: 'lim-target', tier: 'free' });
      assert.equal((await invite('lim-one-more@example.test')).status, 403);
      // Another account is not held back by this one's invitations.
      const other = await account('lim-other');
      const theirs = await p.request('POST', `/workspaces/${other.personal}/invite`, {
        key: other.key,
        body: { account_id: target.account.id },
      });
      assert.equal(theirs.status, 201, theirs.text);

      // Unanswered, they expire after 14 days, and their places with them.
      p.clock.advance(14 * 86_400_000 + 1000);
      assert.equal((await invite('lim-next-fortnight@example.test')).status, 201);
    });

    it('pages an inbox that many workspaces invite to', async () => {
      const target = await account('page-target', 'page-target@example.test');
      const inviters = await Promise.all([1, 2, 3].map((i) => account(`page-inviter-${i}`)));
      // 3 inviters, 25 workspaces each would pass the pro limit of owned workspaces: 20 each, 60 in all.
      const sent: string[] = [];
      for (const inviter of inviters) {
        for (let i = 0; i < 20; i++) {
          const ws = (
            await p.request<Workspace>('POST', '/workspaces', {
              key: inviter.key,
              body: { name: `Page ${i}` },
            })
          ).body;
          const invited = await p.request<Invitation>('POST', `/workspaces/${ws.id}/invite`, {
            key: inviter.key,
            body: { email: 'page-target@example.test' },
          });
          assert.equal(invited.status, 201, invited.text);
          sent.push(invited.body.id);
          p.clock.advance(1000);
        }
      }
      type Page = { invitations: Invitation[]; total: number; next_offset: number | null };
      const first = await p.request<Page>('GET', '/invitations', { key: target.key });
      assert.equal(first.status, 200, first.text);
      assert.equal(first.body.invitations.length, 50, 'the default page');
      assert.equal(first.body.total, 60);
      assert.equal(first.body.next_offset, 50);
      const rest = await p.request<Page>('GET', '/invitations?offset=50&limit=200', { key: target.key });
      assert.equal(rest.body.next_offset, null);
      assert.deepEqual(
        [...first.body.invitations, ...rest.body.invitations].map((i) => i.id),
        sent,
        'every invitation once, oldest first',
      );
      const small = await p.request<Page>('GET', '/invitations?limit=7&offset=3', { key: target.key });
      assert.deepEqual(
        small.body.invitations.map((i) => i.id),
        sent.slice(3, 10),
      );
      for (const query of ['limit=0', 'limit=201', 'offset=-1', 'limit=x', 'page=2']) {
        const bad = await p.request('GET', `/invitations?${query}`, { key: target.key });
        assert.equal(bad.status, 400, query);
        assert.equal(errorOf(bad).code, 'INVALID_INPUT');
      }
    });

    it('two racing accepts of one owner invitation make one membership and count one owner', async () => {
      const owner = await account('race-owner');
      const dave = await account('race-dave');
      const ws = (
        await p.request<Workspace>('POST', '/workspaces', { key: owner.key, body: { name: 'Race' } })
      ).body;
      const invited = await p.request<Invitation>('POST', `/workspaces/${ws.id}/invite`, {
        key: owner.key,
        body: { account_id: dave.id, role: 'owner' },
      });
      const answers = await Promise.all(
        [1, 2, 3].map(() => p.request('POST', `/invitations/${invited.body.id}/accept`, { key: dave.key })),
      );
      const statuses = answers.map((a) => a.status);
      assert.equal(statuses.filter((s) => s === 200).length, 1, answers.map((a) => a.text).join('\n'));
      // The losers find it answered (404), or on DynamoDB may meet the winner's write in flight (409).
      assert.ok(
        statuses.every((s) => [200, 404, 409].includes(s)),
        statuses.join(),
      );
      // Two owners counted, not four: after the first leaves, the second is the last owner.
      const leaves = await p.request('DELETE', `/workspaces/${ws.id}/members/${owner.id}`, {
        key: owner.key,
      });
      assert.equal(leaves.status, 204);
      const last = await p.request('DELETE', `/workspaces/${ws.id}/members/${dave.id}`, { key: dave.key });
      assert.equal(last.status, 409);
    });
  });
}
