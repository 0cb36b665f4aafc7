import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../functions/core/accounts/account.ts';
import { BACKENDS, errorOf, startTestPlatform, type TestPlatform } from './helpers/platform.ts';

type Workspace = {
  id: string;
  name: string;
  slug: string;
  role: string;
  personal: boolean;
  created_at: string;
};
type Member = {
  account_id: string;
  org: string | null;
  email: string | null;
  role: string;
  joined_at: string;
};

for (const backend of BACKENDS) {
  describe(`workspaces and members (end to end over HTTP, ${backend} store)`, () => {
    let p: TestPlatform;
    before(async () => {
      p = await startTestPlatform({}, backend);
    });
    after(() => p.close());

    const account = async (org: string, email?: string) => {
      const c = await createAccount(p.deps, { org, tier: 'pro', ...(email ? { email } : {}) });
      return { key: c.api_key, id: c.account.id, personal: c.workspace_id };
    };

    it('creates a workspace with the caller as owner and lists it beside the personal one', async () => {
      const a = await account('ws-alpha');
      const res = await p.request<Workspace>('POST', '/workspaces', {
        key: a.key,
        body: { name: 'Data Team' },
      });
      assert.equal(res.status, 201);
      assert.equal(res.body.name, 'Data Team');
      assert.equal(res.body.slug, 'data-team');
      assert.equal(res.body.role, 'owner');
      assert.equal(res.body.created_at, p.clock.now().toISOString());
      assert.match(res.body.id, /^[0-9a-f-]{36}$/);

      const list = await p.request<{ workspaces: Workspace[] }>('GET', '/workspaces', { key: a.key });
      assert.equal(list.status, 200);
      const byId = new Map(list.body.workspaces.map((w) => [w.id, w]));
      assert.equal(byId.get(a.personal)?.slug, 'ws-alpha');
      assert.equal(byId.get(a.personal)?.personal, true);
      assert.equal(byId.get(a.personal)?.role, 'owner');
      assert.equal(byId.get(res.body.id)?.role, 'owner');
      assert.equal(list.body.workspaces.length, 2);
    });

    it('derives a free slug when the name’s is taken, and refuses a taken explicit slug with 409', async () => {
      const a = await account('ws-beta');
      const first = await p.request<Workspace>('POST', '/workspaces', { key: a.key, body: { name: 'Ops' } });
      const second = await p.request<Workspace>('POST', '/workspaces', { key: a.key, body: { name: 'Ops' } });
      assert.equal(first.body.slug, 'ops');
      assert.match(second.body.slug, /^ops-[0-9a-f]{6}$/);
      const clash = await p.request('POST', '/workspaces', {
        key: a.key,
        body: { name: 'Other', slug: 'ops' },
      });
      assert.equal(clash.status, 409);
      assert.equal(errorOf(clash).code, 'CONFLICT');
      const orgClash = await p.request('POST', '/workspaces', {
        key: a.key,
        body: { name: 'x', slug: 'ws-beta' },
      });
      assert.equal(orgClash.status, 409, 'an org’s personal workspace holds its slug');
      const unicode = await p.request<Workspace>('POST', '/workspaces', {
        key: a.key,
        body: { name: '日本' },
      });
      assert.equal(unicode.status, 201);
      assert.match(unicode.body.slug, /^workspace(-[0-9a-f]{6})?$/);
    });

    it('rejects bad workspace bodies naming the field', async () => {
      for (const [body, field] of [
        [{ name: '' }, 'body.name'],
        [{}, 'body.name'],
        [{ name: 'x', slug: 'Bad Slug' }, 'body.slug'],
        [{ name: 'x', slug: 'tasks' }, 'body.slug'],
        [{ name: 'x', slug: 'a' }, 'body.slug'],
        [{ name: 'x', owner: 'me' }, 'body.owner'],
      ] as const) {
        const res = await p.request('POST', '/workspaces', { body });
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.ok(errorOf(res).fields.includes(field), `${JSON.stringify(body)} names ${field}`);
      }
    });

    it('invites by email or account id (owners only); members list and see the workspace', async () => {
      const owner = await account('team-owner');
      const alice = await account('team-alice', 'alice@example.test');
      const bob = await account('team-bob');
      const ws = (
        await p.request<Workspace>('POST', '/workspaces', { key: owner.key, body: { name: 'Shared' } })
      ).body;

      const byEmail = await p.request<Member>('POST', `/workspaces/${ws.id}/invite`, {
        key: owner.key,
        body: { email: 'ALICE@example.test' },
      });
      assert.equal(byEmail.status, 201);
      assert.equal(byEmail.body.account_id, alice.id);
      assert.equal(byEmail.body.role, 'member');
      assert.equal(byEmail.body.email, 'alice@example.test');

      const byId = await p.request<Member>('POST', `/workspaces/${ws.id}/invite`, {
        key: owner.key,
        body: { account_id: bob.id, role: 'owner' },
      });
      assert.equal(byId.status, 201);
      assert.equal(byId.body.role, 'owner');

      const members = await p.request<{ members: Member[] }>('GET', `/workspaces/${ws.id}/members`, {
        key: alice.key,
      });
      assert.equal(members.status, 200, 'any member may list');
      const roles = Object.fromEntries(members.body.members.map((m) => [m.account_id, m.role]));
      assert.deepEqual(roles, { [owner.id]: 'owner', [alice.id]: 'member', [bob.id]: 'owner' });
      const aliceRow = members.body.members.find((m) => m.account_id === alice.id);
      assert.equal(aliceRow?.email, 'alice@example.test');
      assert.equal(aliceRow?.org, 'team-alice');

      const mine = await p.request<{ workspaces: Workspace[] }>('GET', '/workspaces', { key: alice.key });
      assert.equal(mine.body.workspaces.find((w) => w.id === ws.id)?.role, 'member');

      const task = await p.request('POST', '/tasks', {
        key: alice.key,
        body: { title: 'shared work', workspace_id: ws.id },
      });
      assert.equal(task.status, 201, 'members work on the workspace’s tasks');
      const listed = await p.request<{ total: number }>('GET', `/workspaces/${ws.id}/tasks`, {
        key: owner.key,
      });
      assert.equal(listed.body.total, 1);

      const memberInvites = await p.request('POST', `/workspaces/${ws.id}/invite`, {
        key: alice.key,
        body: { account_id: owner.id },
      });
      assert.equal(memberInvites.status, 403);
      assert.equal(errorOf(memberInvites).code, 'FORBIDDEN');

      const again = await p.request('POST', `/workspaces/${ws.id}/invite`, {
        key: owner.key,
        body: { account_id: alice.id },
      });
      assert.equal(again.status, 409);
      assert.equal(errorOf(again).code, 'CONFLICT');

      const unknownEmail = await p.request('POST', `/workspaces/${ws.id}/invite`, {
        key: owner.key,
        body: { email: 'nobody@example.test' },
      });
      assert.equal(unknownEmail.status, 404);
      assert.match(errorOf(unknownEmail).message, /No account has the email nobody@example.test/);
      const unknownId = await p.request('POST', `/workspaces/${ws.id}/invite`, {
        key: owner.key,
        body: { account_id: '00000000-0000-4000-8000-000000000000' },
      });
      assert.equal(unknownId.status, 404);
      assert.match(errorOf(unknownId).message, /No account has the id/);

      for (const body of [
        {},
        { account_id: bob.id, email: 'a@b.test' },
        { email: 'not-an-email' },
        { account_id: bob.id, role: 'admin' },
      ]) {
        const res = await p.request('POST', `/workspaces/${ws.id}/invite`, { key: owner.key, body });
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(errorOf(res).code, 'INVALID_INPUT');
      }
    });

    it('always keeps at least one owner; members may leave; owners may remove', async () => {
      const owner = await account('keep-owner');
      const other = await account('keep-other');
      const member = await account('keep-member');
      const ws = (
        await p.request<Workspace>('POST', '/workspaces', { key: owner.key, body: { name: 'Keep' } })
      ).body;
      await p.request('POST', `/workspaces/${ws.id}/invite`, {
        key: owner.key,
        body: { account_id: member.id },
      });

      const lastOwner = await p.request('DELETE', `/workspaces/${ws.id}/members/${owner.id}`, {
        key: owner.key,
      });
      assert.equal(lastOwner.status, 409);
      assert.match(errorOf(lastOwner).message, /at least one owner/);

      const memberRemoves = await p.request('DELETE', `/workspaces/${ws.id}/members/${owner.id}`, {
        key: member.key,
      });
      assert.equal(memberRemoves.status, 403);

      await p.request('POST', `/workspaces/${ws.id}/invite`, {
        key: owner.key,
        body: { account_id: other.id, role: 'owner' },
      });
      const leaves = await p.request('DELETE', `/workspaces/${ws.id}/members/${owner.id}`, {
        key: owner.key,
      });
      assert.equal(leaves.status, 204, 'with another owner, an owner may leave');
      const gone = await p.request('GET', `/workspaces/${ws.id}/members`, { key: owner.key });
      assert.equal(gone.status, 404, 'after leaving, the workspace is not found');

      const memberLeaves = await p.request('DELETE', `/workspaces/${ws.id}/members/${member.id}`, {
        key: member.key,
      });
      assert.equal(memberLeaves.status, 204);

      const lastAgain = await p.request('DELETE', `/workspaces/${ws.id}/members/${other.id}`, {
        key: other.key,
      });
      assert.equal(lastAgain.status, 409);
      const personal = await p.request('DELETE', `/workspaces/${owner.personal}/members/${owner.id}`, {
        key: owner.key,
      });
      assert.equal(personal.status, 409, 'nobody leaves their personal workspace ownerless');
    });

    it('answers 404 for unknown and malformed workspace ids', async () => {
      for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', '..%2F..']) {
        for (const path of [
          `/workspaces/${id}/members`,
          `/workspaces/${id}/tasks`,
          `/workspaces/${id}/secrets`,
        ]) {
          const res = await p.request('GET', path);
          assert.equal(res.status, 404, path);
          assert.equal(errorOf(res).code, 'NOT_FOUND');
        }
      }
    });
  });
}
