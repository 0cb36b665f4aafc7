import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { agentKeys } from '../../functions/core/agents/agent-keys.ts';
import { type LogRange, readLogPage } from '../../functions/core/logs/log-page.ts';
import { atLeast, LOG_LEVELS, type LogLine, logsQuery } from '../../functions/core/logs/log-schemas.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

type Page = { logs: LogLine[]; next_cursor: string | null };

/** A source as the port describes it: the newest `limit` lines within the range, newest first. */
function sourceOf(all: LogLine[]) {
  const newestFirst = [...all].sort((a, b) =>
    a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : 0,
  );
  return async (r: LogRange) =>
    newestFirst
      .filter(
        (l) =>
          (r.since === undefined || l.timestamp >= r.since) &&
          (r.until === undefined || l.timestamp <= r.until) &&
          atLeast(l.level, r.level),
      )
      .slice(0, r.limit);
}

async function allPages(read: ReturnType<typeof sourceOf>, query: Record<string, string>) {
  const out: LogLine[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 10_000; pages++) {
    const q = logsQuery.parse({ ...query, ...(cursor ? { cursor } : {}) });
    const page = await readLogPage(read, q);
    assert.ok(page.logs.length <= q.limit);
    out.push(...page.logs);
    cursor = page.next_cursor;
    if (!cursor) return out;
    assert.equal(page.logs.length, q.limit, 'only the last page is short');
  }
  throw new Error('paging did not end');
}

describe('log paging (core/logs), one algorithm for every source', () => {
  it('pages through every line exactly once, newest first, even when many share a millisecond', async () => {
    // Lines bunched on few milliseconds, as a call's tool lines are (they share the call's time).
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const lines: LogLine[] = Array.from({ length: 300 }, (_, i) => ({
      timestamp: new Date(Date.UTC(2026, 5, 15, 12, 0, 0, rand(12))).toISOString(),
      level: LOG_LEVELS[rand(3)] ?? 'info',
      message: `line ${i}`,
      request_id: null,
    }));
    const read = sourceOf(lines);
    const whole = await read({ limit: 10_000 });
    for (const limit of ['1', '2', '7', '50', '299', '300', '5000']) {
      assert.deepEqual(await allPages(read, { limit }), whole, `limit ${limit}`);
    }
    // Filters hold across pages too.
    const warnUp = await allPages(read, { limit: '3', level: 'warn' });
    assert.deepEqual(
      warnUp,
      whole.filter((l) => l.level !== 'info'),
    );
    const since = '2026-06-15T12:00:00.004Z';
    const until = '2026-06-15T12:00:00.008Z';
    assert.deepEqual(
      await allPages(read, { limit: '4', since, until }),
      whole.filter((l) => l.timestamp >= since && l.timestamp <= until),
    );
  });

  it('refuses a cursor it did not make', async () => {
    const read = sourceOf([]);
    for (const cursor of ['x', Buffer.from('{"v":1,"until":"soon","skip":0}').toString('base64url')]) {
      await assert.rejects(
        readLogPage(read, logsQuery.parse({ cursor })),
        (e: { status?: number; message?: string }) => {
          assert.equal(e.status, 400);
          assert.match(String(e.message), /query\.cursor/);
          return true;
        },
      );
    }
  });
});

describe('GET /agents/{id}/logs, over HTTP', () => {
  let p: TestPlatform;
  let owner: { key: string };
  let id: string;
  const logsOf = (query = '') => p.request<Page>('GET', `/agents/${id}/logs${query}`, { key: owner.key });

  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
    const o = await createAccount(p.deps, { org: 'logco', tier: 'pro' });
    owner = { key: o.api_key };
    // A tool agent made of the sandbox's own programs: `cat` echoes its input; a missing file fails.
    const res = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      key: owner.key,
      body: {
        name: 'echo',
        type: 'tool',
        description: 'echoes, or fails when asked to read a file that is not there',
        supported_providers: ['any'],
        runtime: { command: 'cat' },
        required_secrets: [],
      },
    });
    assert.equal(res.status, 201, res.text);
    id = res.body.id;
  });
  after(() => p.close());

  it('shows every call’s line in the one shape, pages with next_cursor, and filters by level and time', async () => {
    // Three calls in one millisecond (the clock is frozen), then two later.
    for (let i = 0; i < 3; i++) {
      const r = await p.request('POST', '/logco/echo/v1/run', { key: owner.key, body: { i } });
      assert.equal(r.status, 200, r.text);
    }
    const first = p.clock.now().toISOString();
    p.clock.advance(1000);
    for (let i = 3; i < 5; i++) {
      const r = await p.request('POST', '/logco/echo/v1/run', { key: owner.key, body: { i } });
      assert.equal(r.status, 200, r.text);
    }
    const whole = await logsOf('?limit=5000');
    assert.equal(whole.status, 200, whole.text);
    assert.equal(whole.body.next_cursor, null);
    assert.ok(whole.body.logs.length >= 5, whole.text);
    for (const l of whole.body.logs) {
      assert.deepEqual(Object.keys(l).sort(), ['level', 'message', 'request_id', 'timestamp']);
      assert.equal(l.level, 'info');
      assert.match(String(l.request_id), /\S/);
    }
    const times = whole.body.logs.map((l) => l.timestamp);
    assert.deepEqual(times, [...times].sort().reverse(), 'newest first');

    // One line a page: the same lines in the same order, each once.
    const paged: LogLine[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const r = await logsOf(`?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(r.status, 200, r.text);
      paged.push(...r.body.logs);
      cursor = r.body.next_cursor;
    }
    assert.deepEqual(paged, whole.body.logs);

    const early = await logsOf(`?until=${encodeURIComponent(first)}`);
    assert.deepEqual(
      early.body.logs,
      whole.body.logs.filter((l) => l.timestamp <= first),
    );
    assert.equal(early.body.logs.length, whole.body.logs.length - 2);
    assert.deepEqual((await logsOf('?level=warn')).body.logs, [], 'successful calls log at info');

    // A failing run's line is error: level filters by the lowest severity, from the store. (A
    // call's own line, keyed by its request id: one of its engine's lines says whose call it was.)
    const later = p.clock.now().toISOString();
    await p.deps.store.put({
      ...agentKeys.version(id),
      sk: `${agentKeys.logPrefix}${later}#req_x`,
      timestamp: later,
      level: 'error',
      message: 'call req_x failed with TIMEOUT after 9 ms',
      request_id: 'req_x',
    });
    const warnUp = await logsOf('?level=warn');
    assert.deepEqual(
      warnUp.body.logs.map((l) => [l.level, l.message]),
      [['error', 'call req_x failed with TIMEOUT after 9 ms']],
    );
    assert.equal(
      (await logsOf('?level=info')).body.logs.length,
      whole.body.logs.length + 1,
      'info is every line',
    );
  });

  it('answers 400 naming the query field for a bad level, limit, time or cursor', async () => {
    for (const [query, field] of [
      ['?level=debug', 'query.level'],
      ['?limit=0', 'query.limit'],
      ['?limit=5001', 'query.limit'],
      ['?since=yesterday', 'query.since'],
      ['?cursor=not-a-cursor', 'query.cursor'],
    ] as const) {
      const r = await logsOf(query);
      assert.equal(r.status, 400, `${query}: ${r.text}`);
      assert.equal(errorOf(r).code, 'INVALID_INPUT');
      assert.ok(errorOf(r).fields.includes(field), `${query}: ${r.text}`);
    }
  });
});
