/**
 * List pages bounded by size as well as count (issue 33, problem 3's lists): on AWS an answer over
 * a Lambda response's 6 MB is a 502. sizedPage (functions/core/payloads/answer-page.ts) on its
 * own, with a small budget; test/e2e/large-values.test.ts lists real schedules at the real budget
 * on both deployments.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sizedPage } from '../functions/core/payloads/answer-page.ts';
import { answerBytes } from '../functions/core/payloads/output-answer.ts';

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

  it('answers one item alone even when it is over the budget, and says where the next begins', () => {
    const { page, next_offset } = sizedPage([{ t: 'y'.repeat(5_000) }, { t: 'z' }], 10, 12, 1_000);
    assert.equal(page.length, 1);
    assert.equal(next_offset, 11);
  });
});
