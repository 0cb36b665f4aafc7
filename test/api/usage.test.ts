/**
 * The usage API, caller side (GET /usage and its timeseries, breakdown, tenants, logs and compute), on
 * call records seeded at chosen times (test/helpers/usage-platform.ts); the author side is in
 * author-usage.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallRecord } from '../../functions/core/usage/call-records.ts';
import { incrementDailyCalls } from '../../functions/core/usage/daily-usage.ts';
import { type ApiResponse, BACKENDS, errorOf, type TestPlatform } from '../helpers/platform.ts';
import {
  type Account,
  type Breakdown,
  byKey,
  type Compute,
  type Logs,
  NOW,
  type Summary,
  startUsagePlatform,
  type Tenants,
  type Timeseries,
  type UsagePlatform,
} from '../helpers/usage-platform.ts';

for (const backend of BACKENDS) {
  describe(`Usage API (end to end over HTTP, ${backend} store)`, () => {
    let p: TestPlatform;
    let maker: Account;
    let other: Account;
    let alice: Account;
    let bob: Account;
    let pager: Account;
    let seeded: CallRecord[];
    let seed: UsagePlatform['seed'];
    let get: UsagePlatform['get'];
    let ok: UsagePlatform['ok'];

    before(async () => {
      ({ p, maker, other, alice, bob, pager, seeded, seed, get, ok } = await startUsagePlatform(backend));
    });
    after(() => p.close());

    it('GET /usage: totals of the caller’s calls in the last 7 days, and today’s quota', async () => {
      await incrementDailyCalls(p.deps, alice.accountId);
      await incrementDailyCalls(p.deps, alice.accountId);
      const res = await get<Summary>('/usage', alice);
      assert.equal(res.status, 200, res.text);
      const body = res.body;
      assert.equal(body.from, '2026-06-08T12:00:00.000Z');
      assert.equal(body.to, NOW);
      assert.deepEqual(body.totals, {
        calls: 7,
        successes: 5,
        errors: 1,
        timeouts: 1,
        errors_by_code: { LLM_ERROR: 1, TIMEOUT: 1 },
        input_tokens: 470,
        output_tokens: 180,
        total_tokens: 650,
        // (200 + 400 + 1000 + 300000 + 50 + 100 + 500) / 7
        avg_duration_ms: 43179,
        p95_duration_ms: 300_000,
      });
      const reset = Date.parse('2026-06-16T00:00:00Z') / 1000;
      assert.deepEqual(body.quota, {
        tier: 'pro',
        limit: 10_000,
        used: 2,
        remaining: 9998,
        reset,
        reset_at: '2026-06-16T00:00:00.000Z',
      });
      assert.equal(res.headers.get('x-ratelimit-remaining'), '9998');
    });

    it('GET /usage: explicit ranges (dates are whole UTC days; offsets are converted), filters', async () => {
      const day = await ok<Summary>('/usage?from=2026-06-15&to=2026-06-15', alice);
      assert.equal(day.from, '2026-06-15T00:00:00.000Z');
      assert.equal(day.to, NOW, 'a range end after now reads as now');
      assert.equal(day.totals.calls, 4);

      const older = await ok<Summary>('/usage?from=2026-06-01&to=2026-06-12', alice);
      assert.equal(older.to, '2026-06-12T23:59:59.999Z');
      assert.equal(older.totals.calls, 3, 'June 1, June 10 and the call at 23:59:59.999 on June 12');

      const offset = await ok<Summary>(
        `/usage?from=${encodeURIComponent('2026-06-15T10:00:00+02:00')}&to=2026-06-15T08:05:00Z`,
        alice,
      );
      assert.equal(offset.from, '2026-06-15T08:00:00.000Z');
      assert.equal(offset.totals.calls, 1, 'both ends are inclusive');

      const onlyTo = await ok<Summary>('/usage?to=2026-06-10', alice);
      assert.equal(onlyTo.from, '2026-06-03T23:59:59.999Z', 'from defaults to 7 days before to');
      assert.equal(onlyTo.totals.calls, 1);

      const retention = await ok<Summary>('/usage?from=2026-03-17', alice);
      assert.equal(retention.totals.calls, 8, 'the start of the UTC day 90 days back is allowed');

      assert.equal((await ok<Summary>('/usage?agent=maker/summarize', alice)).totals.calls, 4);
      assert.equal((await ok<Summary>('/usage?tenant=acme', alice)).totals.calls, 3);
      assert.equal((await ok<Summary>('/usage?tenant=(none)', alice)).totals.calls, 2);
      assert.equal(
        (await ok<Summary>('/usage?tenant=globex&agent=maker-team/translate', alice)).totals.calls,
        2,
      );
      const empty = await ok<Summary>('/usage?agent=nobody/nothing', alice);
      assert.equal(empty.totals.calls, 0);
      assert.equal(empty.totals.avg_duration_ms, null);
      assert.equal(empty.totals.p95_duration_ms, null);
    });

    it('a caller sees only its own calls on the caller side', async () => {
      const bobs = await ok<Summary>('/usage', bob);
      assert.equal(bobs.totals.calls, 2);
      const bobLogs = await ok<Logs>('/usage/logs', bob);
      assert.deepEqual(
        bobLogs.logs.map((l) => l.caller_account_id),
        [bob.accountId, bob.accountId],
      );
      const aliceIds = new Set(
        seeded.filter((r) => r.caller_account_id === alice.accountId).map((r) => r.request_id),
      );
      assert.ok(bobLogs.logs.every((l) => !aliceIds.has(l.request_id as string)));
      // maker authored the agents alice called, but on the caller side sees only its own call.
      assert.equal((await ok<Summary>('/usage', maker)).totals.calls, 1);
      assert.equal((await ok<Summary>('/usage', other)).totals.calls, 0);
      const breakdown = await ok<Breakdown>('/usage/breakdown?group_by=tenant', bob);
      assert.deepEqual(byKey(breakdown.groups), { '(none)': 1, 'bob-t': 1 });
    });

    it('GET /usage/timeseries: zero-filled buckets by day and by hour', async () => {
      const days = await ok<Timeseries>('/usage/timeseries', alice);
      assert.equal(days.granularity, 'day');
      assert.deepEqual(
        days.buckets.map((b) => [b.start.slice(0, 10), b.calls]),
        [
          ['2026-06-08', 0],
          ['2026-06-09', 0],
          ['2026-06-10', 1],
          ['2026-06-11', 0],
          ['2026-06-12', 1],
          ['2026-06-13', 0],
          ['2026-06-14', 1],
          ['2026-06-15', 4],
        ],
      );
      const today = days.buckets.at(-1) as Timeseries['buckets'][number];
      assert.equal(today.start, '2026-06-15T00:00:00.000Z');
      assert.equal(today.successes, 3);
      assert.equal(today.errors, 1);
      assert.equal(today.input_tokens, 450);
      const zero = days.buckets[0] as Timeseries['buckets'][number];
      assert.deepEqual(
        { ...zero, start: undefined },
        {
          start: undefined,
          calls: 0,
          successes: 0,
          errors: 0,
          timeouts: 0,
          errors_by_code: {},
          input_tokens: 0,
          output_tokens: 0,
          total_tokens: 0,
          avg_duration_ms: null,
          p95_duration_ms: null,
        },
      );

      const hours = await ok<Timeseries>(
        '/usage/timeseries?granularity=hour&from=2026-06-15T07:30:00Z&to=2026-06-15T11:59:59Z',
        alice,
      );
      assert.deepEqual(
        hours.buckets.map((b) => [b.start, b.calls]),
        [
          ['2026-06-15T07:00:00.000Z', 0],
          ['2026-06-15T08:00:00.000Z', 1],
          ['2026-06-15T09:00:00.000Z', 0],
          ['2026-06-15T10:00:00.000Z', 2],
          ['2026-06-15T11:00:00.000Z', 1],
        ],
      );
      const filtered = await ok<Timeseries>('/usage/timeseries?agent=maker/summarize', alice);
      assert.equal(
        filtered.buckets.reduce((s, b) => s + b.calls, 0),
        4,
      );
    });

    it('GET /usage/breakdown: every grouping', async () => {
      const expected: Record<string, Record<string, number>> = {
        agent: { 'maker/summarize': 4, 'maker-team/translate': 2, 'other/echo': 1 },
        version: {
          'maker/summarize/v1': 2,
          'maker/summarize/v2': 2,
          'maker-team/translate/v1': 2,
          'other/echo/v1': 1,
        },
        status: { success: 5, error: 1, timeout: 1 },
        provider: { openai: 4, anthropic: 1, '(none)': 2 },
        model: { 'gpt-4o': 4, 'claude-sonnet': 1, '(none)': 2 },
        tenant: { acme: 3, globex: 2, '(none)': 2 },
        endpoint: {
          'maker/summarize/run': 3,
          'maker/summarize/summarize': 1,
          'maker-team/translate/run': 2,
          'other/echo/run': 1,
        },
      };
      for (const [groupBy, groups] of Object.entries(expected)) {
        const body = await ok<Breakdown>(`/usage/breakdown?group_by=${groupBy}`, alice);
        assert.equal(body.group_by, groupBy);
        assert.deepEqual(byKey(body.groups), groups, groupBy);
        const calls = body.groups.map((g) => g.calls);
        assert.deepEqual(
          calls,
          [...calls].sort((a, b) => b - a),
          `${groupBy}: most calls first`,
        );
      }
      const byDefault = await ok<Breakdown>('/usage/breakdown', alice);
      assert.equal(byDefault.group_by, 'agent');
      const summarize = byDefault.groups.find(
        (g) => g.key === 'maker/summarize',
      ) as Breakdown['groups'][number];
      assert.deepEqual(
        { errors_by_code: summarize.errors_by_code, input_tokens: summarize.input_tokens },
        { errors_by_code: { LLM_ERROR: 1, TIMEOUT: 1 }, input_tokens: 130 },
      );
    });

    it('GET /usage/tenants: calls per tenant, calls without one as (none)', async () => {
      const body = await ok<Tenants>('/usage/tenants', alice);
      assert.deepEqual(
        body.tenants.map((t) => [t.tenant, t.calls, t.input_tokens]),
        [
          ['acme', 3, 130],
          ['(none)', 2, 0],
          ['globex', 2, 340],
        ],
      );
      const scoped = await ok<Tenants>('/usage/tenants?agent=maker-team/translate', alice);
      assert.deepEqual(
        scoped.tenants.map((t) => [t.tenant, t.calls]),
        [['globex', 2]],
      );
    });

    it('GET /usage/logs: newest first, records without store keys, paged by cursor', async () => {
      const all = await ok<Logs>('/usage/logs', alice);
      assert.equal(all.next_cursor, null);
      assert.deepEqual(
        all.logs.map((l) => l.at),
        [
          '2026-06-15T11:59:59.000Z',
          '2026-06-15T10:45:00.000Z',
          '2026-06-15T10:15:00.000Z',
          '2026-06-15T08:05:00.000Z',
          '2026-06-14T09:00:00.000Z',
          '2026-06-12T23:59:59.999Z',
          '2026-06-10T00:00:00.000Z',
        ],
      );
      const first = all.logs[0] as Record<string, unknown>;
      for (const internal of ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'ttl'])
        assert.ok(!(internal in first), internal);
      const seededFirst = seeded.find((r) => r.request_id === first.request_id);
      assert.deepEqual({ ...first }, { ...seededFirst });

      // 23 calls of pager, pages of 5: every call exactly once, in order, and the last page says so.
      const expected = seeded
        .filter((r) => r.caller_account_id === pager.accountId)
        .map((r) => `${r.at}#${r.request_id}`)
        .sort()
        .reverse();
      assert.equal(expected.length, 23);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: Logs = await ok<Logs>(
          `/usage/logs?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          pager,
        );
        assert.ok(page.logs.length <= 5);
        seen.push(...page.logs.map((l) => `${l.at}#${l.request_id}`));
        cursor = page.next_cursor;
        pages++;
      } while (cursor);
      assert.equal(pages, 5);
      assert.deepEqual(seen, expected);

      // A new call between pages does not shift the pages that follow.
      const p1 = await ok<Logs>('/usage/logs?limit=10', pager);
      // (to an agent of pager's own, so the author-side counts below stay as they are)
      const late = await seed(pager, '2026-06-15T11:59:59.500Z', {
        org: 'pager',
        name: 'self',
        ws: pager.workspaceId,
      });
      const p2 = await ok<Logs>(
        `/usage/logs?limit=10&cursor=${encodeURIComponent(p1.next_cursor as string)}`,
        pager,
      );
      assert.deepEqual(
        [...p1.logs, ...p2.logs].map((l) => `${l.at}#${l.request_id}`),
        expected.slice(0, 20),
      );
      assert.ok(!p2.logs.some((l) => l.request_id === late.request_id));

      const filtered = await ok<Logs>('/usage/logs?agent=maker-team/translate&limit=2', pager);
      assert.equal(filtered.logs.length, 2);
      const rest = await ok<Logs>(
        `/usage/logs?agent=maker-team/translate&limit=2&cursor=${encodeURIComponent(filtered.next_cursor as string)}`,
        pager,
      );
      assert.equal(rest.logs.length, 1);
      assert.equal(rest.next_cursor, null);
      assert.ok([...filtered.logs, ...rest.logs].every((l) => l.agent === 'translate'));

      // By how the call ended: `failed` is an error or a timeout, newest first as the rest.
      const statusOf = (l: Logs['logs'][number]) => (l as { status: string }).status;
      const ended = (which: string) =>
        all.logs.filter((l) => (which === 'failed' ? statusOf(l) !== 'success' : statusOf(l) === which));
      for (const which of ['success', 'error', 'timeout', 'failed']) {
        const only = await ok<Logs>(`/usage/logs?status=${which}`, alice);
        assert.deepEqual(
          only.logs.map((l) => l.request_id),
          ended(which).map((l) => l.request_id),
          which,
        );
      }
      assert.ok(ended('error').length > 0 && ended('timeout').length > 0, 'the seed has both failures');
      // Paged: one failure a page, each once.
      const firstFailure = await ok<Logs>('/usage/logs?status=failed&limit=1', alice);
      assert.equal(firstFailure.logs.length, 1);
      const nextFailure = await ok<Logs>(
        `/usage/logs?status=failed&limit=1&cursor=${encodeURIComponent(firstFailure.next_cursor as string)}`,
        alice,
      );
      assert.deepEqual(
        [...firstFailure.logs, ...nextFailure.logs].map((l) => l.request_id),
        ended('failed')
          .slice(0, 2)
          .map((l) => l.request_id),
      );
      const bad = await get('/usage/logs?status=broken', alice);
      assert.equal(bad.status, 400);
      assert.equal(errorOf(bad).code, 'INVALID_INPUT');
      assert.match(errorOf(bad).message, /status/);
    });

    it('GET /usage/compute: sums compute_ms of sandboxed calls', async () => {
      const body = await ok<Compute>('/usage/compute', alice);
      assert.equal(body.sandbox_calls, 2);
      assert.equal(body.compute_ms, 4200);
      assert.equal(body.compute_hours, 0.0012);
      assert.deepEqual(body.agents, [
        { agent: 'maker-team/translate', sandbox_calls: 1, compute_ms: 3000 },
        { agent: 'other/echo', sandbox_calls: 1, compute_ms: 1200 },
      ]);
      // Per UTC day: every day of the range is there; the days with compute sum to the total.
      const days = (
        body as Compute & { days: { day: string; compute_ms: number; agents: { agent: string }[] }[] }
      ).days;
      assert.ok(days.length >= 7, 'the default 7-day range, day by day');
      assert.equal(
        days.reduce((sum, d) => sum + d.compute_ms, 0),
        4200,
      );
      assert.ok(days.every((d) => /^\d{4}-\d{2}-\d{2}$/.test(d.day)));
      assert.ok(days.filter((d) => d.compute_ms > 0).every((d) => d.agents.length > 0));
      const none = await ok<Compute>('/usage/compute', bob);
      assert.deepEqual(
        { calls: none.sandbox_calls, ms: none.compute_ms, agents: none.agents },
        { calls: 0, ms: 0, agents: [] },
      );
    });

    it('bad queries answer 400 INVALID_INPUT naming the field', async () => {
      const cases: [string, string][] = [
        ['/usage?from=2026-06-14&to=2026-06-13', 'query.to'],
        ['/usage?from=2026-06-14T10:00:00Z&to=2026-06-14T09:59:59Z', 'query.to'],
        ['/usage?from=2026-03-16', 'query.from'],
        ['/usage?from=2026-01-01&to=2026-02-01', 'query.from'],
        ['/usage?to=2026-01-01', 'query.to'],
        ['/usage?from=2026-06-16', 'query.from'],
        ['/usage?from=yesterday', 'query.from'],
        ['/usage?from=2026-02-30', 'query.from'],
        ['/usage?to=2026-06-15T12:00:00', 'query.to'],
        ['/usage?agent=maker', 'query.agent'],
        ['/usage?colour=red', 'query.colour'],
        ['/usage/timeseries?granularity=week', 'query.granularity'],
        ['/usage/breakdown?group_by=caller', 'query.group_by'],
        ['/usage/breakdown?group_by=colour', 'query.group_by'],
        ['/usage/tenants?tenant=acme', 'query.tenant'],
        ['/usage/logs?limit=0', 'query.limit'],
        ['/usage/logs?limit=201', 'query.limit'],
        ['/usage/logs?cursor=not-a-cursor', 'query.cursor'],
        [`/usage/logs?cursor=${Buffer.from('{"v":1,"sk":"x"}').toString('base64url')}`, 'query.cursor'],
        ['/author-usage?workspace_id=nope', 'query.workspace_id'],
        ['/author-usage/breakdown?group_by=week', 'query.group_by'],
        ['/author-usage/timeseries?from=2020-01-01', 'query.from'],
      ];
      for (const [path, field] of cases) {
        const res: ApiResponse = await get(path, alice);
        assert.equal(res.status, 400, `${path}: ${res.text.slice(0, 300)}`);
        const err = errorOf(res);
        assert.equal(err.code, 'INVALID_INPUT', path);
        assert.ok(err.fields.includes(field), `${path}: names ${field}, got ${err.fields.join(', ')}`);
        assert.ok(err.message.includes(field), `${path}: message names ${field}`);
      }
      assert.equal((await get('/usage', { key: 'ahk_nope' } as Account)).status, 401);
    });
  });
}
