/**
 * List pages bounded by size as well as count: on AWS an answer over
 * a Lambda response's 6 MB is a 502. sizedPage (functions/core/payloads/answer-page.ts) on its
 * own, with a small budget; test/e2e/large-values.test.ts lists real schedules at the real budget
 * on both deployments.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type LogReader, readLogPage } from '../../functions/core/logs/log-page.ts';
import type { LogLine } from '../../functions/core/logs/log-schemas.ts';
import { sizedPage, sizedPageOf } from '../../functions/core/payloads/answer-page.ts';
import { answerBytes, INLINE_OUTPUT_BYTES } from '../../functions/core/payloads/output-answer.ts';
import { MAX_PROMPT_TEMPLATE_BYTES } from '../../functions/shared/byte-limits.ts';
import { type ApiResponse, BACKENDS, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

type AgentPage = { agents: { name: string }[]; total: number; next_offset: number | null };
type TaskPage = { tasks: { title: string }[]; total: number; next_offset: number | null };

const lambdaBytes = (items: unknown[]) => {
  const json = JSON.stringify(items);
  return answerBytes(json, Buffer.byteLength(json));
};

describe('a page bounded by size', () => {
  const items = Array.from({ length: 30 }, (_, i) => ({
    id: i,
    text: (i % 3 === 0 ? '"' : 'x').repeat(400),
  }));

  it('walks every item once, in order, each page within the budget', () => {
    const budget = 2_000;
    const seen: number[] = [];
    for (let offset: number | null = 0; offset !== null; ) {
      const { page, next_offset }: { page: typeof items; next_offset: number | null } = sizedPage(
        items.slice(offset, offset + 50),
        offset,
        items.length,
        budget,
      );
      assert.ok(page.length >= 1);
      assert.ok(lambdaBytes(page) <= budget, `a page of ${lambdaBytes(page)} bytes`);
      seen.push(...page.map((p) => p.id));
      assert.equal(next_offset === null, offset + page.length === items.length);
      offset = next_offset;
    }
    assert.deepEqual(
      seen,
      items.map((i) => i.id),
    );
  });

  it('counts quotes twice, as a Lambda response carries them', () => {
    const quotes = [{ t: '"'.repeat(600) }, { t: '"'.repeat(600) }];
    const letters = [{ t: 'x'.repeat(600) }, { t: 'x'.repeat(600) }];
    assert.equal(sizedPage(letters, 0, 2, 1_400).page.length, 2);
    assert.equal(sizedPage(quotes, 0, 2, 1_400).page.length, 1);
  });

  it('makes ready only the items it answers, one at a time (a run’s stored output is read back)', async () => {
    const loaded: number[] = [];
    let inFlight = 0;
    const { page, next_offset } = await sizedPageOf(
      [0, 1, 2, 3, 4, 5],
      0,
      6,
      async (i) => {
        inFlight++;
        assert.equal(inFlight, 1, 'one at a time');
        await new Promise((r) => setTimeout(r, 1));
        inFlight--;
        loaded.push(i);
        return { i, text: 'x'.repeat(500) };
      },
      1_100,
    );
    assert.deepEqual(
      page.map((p) => p.i),
      [0, 1],
    );
    assert.deepEqual(loaded, [0, 1, 2], 'the third was read to find it did not fit, no more');
    assert.equal(next_offset, 2);
  });

  it('answers one item alone even when it is over the budget, and says where the next begins', () => {
    const { page, next_offset } = sizedPage([{ t: 'y'.repeat(5_000) }, { t: 'z' }], 10, 12, 1_000);
    assert.equal(page.length, 1);
    assert.equal(next_offset, 11);
  });
});

describe('log pages bounded by size as well as count', () => {
  // 400 lines of 16 KiB of quotes, three to a millisecond: 26 MB as a Lambda response carries them.
  const lines: LogLine[] = Array.from({ length: 400 }, (_, i) => ({
    timestamp: new Date(Date.UTC(2026, 10, 25, 0, 0, 0, 1000 - Math.floor(i / 3))).toISOString(),
    level: 'info',
    message: `${i}:${'"'.repeat(16 * 1024 - 8)}`,
    request_id: null,
  }));
  /** The newest `limit` lines within [since, until], newest first, as a store or CloudWatch reads them. */
  const reader: LogReader = async ({ since, until, limit }) =>
    lines.filter((l) => (!since || l.timestamp >= since) && (!until || l.timestamp <= until)).slice(0, limit);

  it('walks every line once, newest first, each page within a Lambda response, resuming mid-millisecond', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await readLogPage(reader, { limit: 5000, ...(cursor ? { cursor } : {}) });
      pages++;
      assert.ok(page.logs.length >= 1);
      assert.ok(lambdaBytes(page.logs) <= INLINE_OUTPUT_BYTES, `a page of ${lambdaBytes(page.logs)} bytes`);
      seen.push(...page.logs.map((l) => l.message.split(':')[0] as string));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    assert.ok(pages >= 4, `${pages} pages`);
    assert.deepEqual(
      seen,
      lines.map((_, i) => String(i)),
    );
  });
});

for (const backend of BACKENDS) {
  describe(`tasks listed by size as well as count (${backend} store)`, () => {
    let p: TestPlatform;
    before(async () => {
      p = await startTestPlatform({}, backend, {}, { inMemory: true });
    });
    after(() => p?.close());

    it('pages tasks whose descriptions are large: each page fits a Lambda response, each task once', async () => {
      const caller = await p.createAccount('bigtasks', 'pro');
      // 50,000 quotes: 100,000 bytes of JSON, 200,000 as a Lambda response carries them.
      const description = '"'.repeat(50_000);
      const count = Math.ceil(INLINE_OUTPUT_BYTES / 200_000) + 2;
      for (let i = 0; i < count; i++) {
        const res = await p.request('POST', '/tasks', {
          key: caller.key,
          body: { title: `big-${i}`, description },
        });
        assert.equal(res.status, 201, res.text.slice(0, 300));
      }
      const seen: string[] = [];
      let pages = 0;
      for (let offset: number | null = 0; offset !== null; pages++) {
        const res: ApiResponse<TaskPage> = await p.request<TaskPage>(
          'GET',
          `/tasks?limit=200&offset=${offset}`,
          {
            key: caller.key,
          },
        );
        assert.equal(res.status, 200, res.text.slice(0, 300));
        assert.ok(lambdaBytes(res.body.tasks) <= INLINE_OUTPUT_BYTES);
        assert.equal(res.body.total, count);
        seen.push(...res.body.tasks.map((t) => t.title));
        offset = res.body.next_offset;
      }
      assert.ok(pages > 1, 'more than one page');
      assert.deepEqual([...seen].sort(), Array.from({ length: count }, (_, i) => `big-${i}`).sort());
    });
  });

  describe(`agents listed by size as well as count (${backend} store)`, () => {
    let p: TestPlatform;
    before(async () => {
      p = await startTestPlatform({}, backend, {}, { inMemory: true });
    });
    after(() => p?.close());

    it('pages agents whose manifests are large: each page fits a Lambda response, each agent once', async () => {
      const caller = await p.createAccount('bigprompts', 'pro');
      const template = 'p'.repeat(MAX_PROMPT_TEMPLATE_BYTES - 1024);
      const count = Math.ceil(INLINE_OUTPUT_BYTES / template.length) + 2;
      for (let i = 0; i < count; i++) {
        const res = await p.request('POST', '/agents', {
          key: caller.key,
          body: {
            name: `big-${i}`,
            description: 'Large.',
            supported_providers: ['any'],
            prompt_template: template,
          },
        });
        assert.equal(res.status, 201, res.text.slice(0, 300));
      }
      const seen: string[] = [];
      let pages = 0;
      for (let offset: number | null = 0; offset !== null; pages++) {
        const res: ApiResponse<AgentPage> = await p.request<AgentPage>(
          'GET',
          `/agents?limit=50&offset=${offset}`,
          {
            key: caller.key,
          },
        );
        assert.equal(res.status, 200, res.text.slice(0, 300));
        assert.ok(lambdaBytes(res.body.agents) <= INLINE_OUTPUT_BYTES);
        assert.equal(res.body.total, count);
        seen.push(...res.body.agents.map((a) => a.name));
        offset = res.body.next_offset;
      }
      assert.ok(pages > 1, 'more than one page');
      assert.deepEqual([...seen].sort(), Array.from({ length: count }, (_, i) => `big-${i}`).sort());
    });
  });
}
