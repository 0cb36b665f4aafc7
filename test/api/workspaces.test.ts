import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { joinWorkspace } from '../helpers/membership.ts';
import { BACKENDS, errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

type Workspace = {
  id: string;
  name: string;
  slug: string;
  role: string;
  personal: boolean;
  created_at: string;
};

for (const backend of BACKENDS) {
  describe(`workspaces and members (end to end over HTTP, ${backend} store)`, () => {
    let p: TestPlatform;
    before(async () => {
      p = await startTestPlatform({}, backend, {}, { inMemory: true });
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

    it('always keeps at least one owner; members may leave; owners may remove', async () => {
      const owner = await account('keep-owner');
      const other = await account('keep-other');
      const member = await account('keep-member');
      const ws = (
        await p.request<Workspace>('POST', '/workspaces', { key: owner.key, body: { name: 'Keep' } })
      ).body;
      await joinWorkspace(p.request, ws.id, owner.key, { key: member.key, id: member.id });

      const lastOwner = await p.request('DELETE', `/workspaces/${ws.id}/members/${owner.id}`, {
        key: owner.key,
      });
      assert.equal(lastOwner.status, 409);
      assert.match(errorOf(lastOwner).message, /at least one owner/);

      const memberRemoves = await p.request('DELETE', `/workspaces/${ws.id}/members/${owner.id}`, {
        key: member.key,
      });
      assert.equal(memberRemoves.status, 403);

      await joinWorkspace(p.request, ws.id, owner.key, { key: other.key, id: other.id }, { role: 'owner' });
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

    it('bounds the workspaces an account owns by its tier, also when its creates race', async () => {
      const c = await createAccount(p.deps, { org: 'ws-hoarder', tier: 'free' });
      const hoarder = { key: c.api_key, id: c.account.id };
      // A free account owns 5, its personal one included: 10 racing creates make exactly 4.
      const made = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          p.request<Workspace>('POST', '/workspaces', { key: hoarder.key, body: { name: `Hoard ${i}` } }),
        ),
      );
      const statuses = made.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 201).length, 4, statuses.join());
      for (const refused of made.filter((r) => r.status !== 201)) {
        assert.equal(refused.status, 403, refused.text);
        assert.equal(errorOf(refused).code, 'FORBIDDEN');
        assert.match(errorOf(refused).message, /free plan allows an account to own 5 workspaces/);
        assert.equal(JSON.parse(refused.text).error.details.limit, 5);
      }
      const listed = await p.request<{ workspaces: Workspace[] }>('GET', '/workspaces', { key: hoarder.key });
      assert.equal(listed.body.workspaces.length, 5);

      // An owner's invitation counts too; a member's does not.
      const other = await account('ws-hoard-other');
      const shared = (
        await p.request<Workspace>('POST', '/workspaces', { key: other.key, body: { name: 'Shared' } })
      ).body;
      const asOwner = await p.request<{ id: string }>('POST', `/workspaces/${shared.id}/invite`, {
        key: other.key,
        body: { account_id: hoarder.id, role: 'owner' },
      });
      const refused = await p.request('POST', `/invitations/${asOwner.body.id}/accept`, { key: hoarder.key });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(errorOf(refused).code, 'FORBIDDEN');

      // Leaving one as owner frees its place.
      const owned = listed.body.workspaces.find((w) => !w.personal);
      assert.ok(owned);
      await joinWorkspace(p.request, owned.id, hoarder.key, other, { role: 'owner' });
      const left = await p.request('DELETE', `/workspaces/${owned.id}/members/${hoarder.id}`, {
        key: hoarder.key,
      });
      assert.equal(left.status, 204, left.text);
      const again = await p.request('POST', `/invitations/${asOwner.body.id}/accept`, { key: hoarder.key });
      assert.equal(again.status, 200, again.text);
      const full = await p.request('POST', '/workspaces', { key: hoarder.key, body: { name: 'One more' } });
      assert.equal(full.status, 403, full.text);
      // Another account is not held back by the first one's count.
      const theirs = await p.request('POST', '/workspaces', { key: other.key, body: { name: 'Theirs' } });
      assert.equal(theirs.status, 201, theirs.text);
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
