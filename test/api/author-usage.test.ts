/**
 * The usage API, author side (GET /author-usage…): calls to the agents of the workspaces an account
 * owns, from every caller, on the call records of test/helpers/usage-platform.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallRecord } from '../../functions/core/usage/call-records.ts';
import { BACKENDS, errorOf, type TestPlatform } from '../helpers/platform.ts';
import {
  type Account,
  type AuthorSummary,
  type Breakdown,
  byKey,
  type Logs,
  startUsagePlatform,
  type Timeseries,
  type UsagePlatform,
} from '../helpers/usage-platform.ts';

for (const backend of BACKENDS) {
  describe(`Usage API, author side (end to end over HTTP, ${backend} store)`, () => {
    let p: TestPlatform;
    let maker: Account;
    let other: Account;
    let alice: Account;
    let bob: Account;
    let pager: Account;
    let teamWs: string;
    let seeded: CallRecord[];
    let get: UsagePlatform['get'];
    let ok: UsagePlatform['ok'];

    before(async () => {
      ({ p, maker, other, alice, bob, pager, teamWs, seeded, get, ok } = await startUsagePlatform(backend));
    });
    after(() => p.close());

    it('GET /author-usage…: calls to the agents of owned workspaces, from every caller', async () => {
      const summary = await ok<AuthorSummary>('/author-usage', maker);
      assert.deepEqual([...summary.workspaces].sort(), [maker.workspaceId, teamWs].sort());
      // alice 6 (not other/echo, not June 1), bob 2, maker 1, pager 3 (translate)
      assert.equal(summary.totals.calls, 12);
      assert.equal(summary.callers, 4);

      const callers = await ok<Breakdown>('/author-usage/breakdown?group_by=caller', maker);
      assert.deepEqual(byKey(callers.groups), {
        [alice.accountId]: 6,
        [bob.accountId]: 2,
        [maker.accountId]: 1,
        [pager.accountId]: 3,
      });
      const agents = await ok<Breakdown>('/author-usage/breakdown', maker);
      assert.deepEqual(byKey(agents.groups), { 'maker/summarize': 6, 'maker-team/translate': 6 });

      const team = await ok<AuthorSummary>(`/author-usage?workspace_id=${teamWs}`, maker);
      assert.deepEqual(team.workspaces, [teamWs]);
      assert.equal(team.totals.calls, 6);

      const series = await ok<Timeseries>('/author-usage/timeseries?granularity=day', maker);
      assert.equal(series.buckets.length, 8);
      assert.deepEqual(
        series.buckets.map((b) => b.calls),
        [0, 0, 1, 0, 0, 1, 5, 5],
      );

      const echo = await ok<AuthorSummary>('/author-usage', other);
      // alice's call to other/echo, and pager's 20 hourly calls.
      assert.equal(echo.totals.calls, 21);
      assert.equal(echo.callers, 2);
    });

    it('GET /author-usage/logs: callers by account id only, never their key ids; paged across workspaces', async () => {
      const expected = seeded
        .filter(
          (r) =>
            (r.workspace_id === maker.workspaceId || r.workspace_id === teamWs) &&
            r.at >= '2026-06-08T12:00:00.000Z',
        )
        .map((r) => `${r.at}#${r.request_id}`)
        .sort()
        .reverse();
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Logs = await ok<Logs>(
          `/author-usage/logs?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          maker,
        );
        for (const entry of page.logs) {
          assert.ok(!('caller_key_id' in entry), 'no key id of the caller');
          assert.equal(typeof entry.caller_account_id, 'string');
        }
        seen.push(...page.logs.map((l) => `${l.at}#${l.request_id}`));
        cursor = page.next_cursor;
      } while (cursor);
      assert.deepEqual(seen, expected);
      assert.ok(!JSON.stringify(seen).includes('key-of-'));
      // The author's records filter by how the call ended too.
      const everything = await ok<Logs>('/author-usage/logs?limit=200', maker);
      assert.equal(everything.next_cursor, null, 'one page holds them all');
      const failed = await ok<Logs>('/author-usage/logs?limit=200&status=failed', maker);
      assert.deepEqual(
        failed.logs.map((l) => l.request_id),
        everything.logs
          .filter((l) => (l as { status: string }).status !== 'success')
          .map((l) => l.request_id),
      );
      assert.ok(failed.logs.length > 0);
    });

    it('author side: another workspace answers 404 to a non-member and 403 to a member who is not an owner', async () => {
      for (const path of [
        `/author-usage?workspace_id=${teamWs}`,
        `/author-usage/timeseries?workspace_id=${teamWs}`,
        `/author-usage/breakdown?workspace_id=${teamWs}&group_by=caller`,
        `/author-usage/logs?workspace_id=${teamWs}`,
      ]) {
        const stranger = await get(path, other);
        assert.equal(stranger.status, 404, path);
        assert.equal(errorOf(stranger).code, 'NOT_FOUND');
        const member = await get(path, bob);
        assert.equal(member.status, 403, path);
        assert.equal(errorOf(member).code, 'FORBIDDEN');
      }
      const missing = await get('/author-usage?workspace_id=00000000-0000-4000-8000-000000000000', maker);
      assert.equal(missing.status, 404);
      // Without workspace_id, bob's author view covers only what bob owns (his personal workspace).
      const own = await ok<AuthorSummary>('/author-usage', bob);
      assert.deepEqual(own.workspaces, [bob.workspaceId]);
      assert.equal(own.totals.calls, 0);
    });
  });
}
