import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TIER_LIMITS } from '../../functions/core/accounts/tiers.ts';
import { ANSWER_BYTES_PER_UNIT } from '../../functions/core/usage/account-request-rate.ts';
import {
  type ApiResponse,
  BACKENDS,
  errorOf,
  startTestPlatform,
  type TestPlatform,
} from '../helpers/platform.ts';

/**
 * Each account's request rate (docs/http.md, "Request rate"), from the side of the tenant whose
 * neighbour pulls large pages (without the rate, one free account pulling 6 MB pages four at a time
 * slowed another tenant's requests many times over): the heavy account is refused with 429 once its
 * answers' bytes have spent its minute, and the other account is not.
 */

const DESCRIPTION = 'd'.repeat(50_000);
const TASKS = 40;

for (const backend of BACKENDS) {
  describe(`the per-account request rate (${backend} store)`, () => {
    let p: TestPlatform;
    before(async () => {
      p = await startTestPlatform({}, backend, {}, { inMemory: true });
    });
    after(() => p.close());

    it('refuses an account whose large answers spent its minute, and not its neighbour', async () => {
      const heavy = await p.createAccount('rate-heavy', 'free');
      const light = await p.createAccount('rate-light', 'free');
      for (let i = 0; i < TASKS; i++) {
        const made = await p.request('POST', '/tasks', {
          key: heavy.key,
          body: { title: `big ${i}`, description: DESCRIPTION },
        });
        assert.equal(made.status, 201, made.text);
      }
      assert.equal(
        (await p.request('POST', '/tasks', { key: light.key, body: { title: 'small' } })).status,
        201,
      );

      const spare = await p.request<{ api_key: string }>('POST', '/api-keys', {
        key: heavy.key,
        body: { name: 'spare' },
      });
      assert.equal(spare.status, 201, spare.text);
      const spareKey = spare.body.api_key;

      // The heavy account pulls its 2 MB page four at a time until it is refused.
      const limit = TIER_LIMITS.free.requestUnitsPerMinute;
      let served = 0;
      let refused: ApiResponse | undefined;
      for (let round = 0; round < 50 && !refused; round++) {
        const answers = await Promise.all(
          [1, 2, 3, 4].map(() => p.request('GET', '/tasks?limit=200', { key: heavy.key })),
        );
        for (const a of answers) {
          if (a.status === 200) served++;
          else refused ??= a;
        }
      }
      assert.ok(refused, 'the heavy account is refused');
      assert.equal(refused.status, 429, refused.text);
      assert.equal(errorOf(refused).code, 'RATE_LIMITED');
      assert.equal(errorOf(refused).is_retryable, true);
      const error = JSON.parse(refused.text).error as {
        suggested_wait_time: number;
        details: Record<string, number | string>;
      };
      const details = error.details;
      assert.equal(details.quota, 'requests');
      assert.equal(details.limit, limit);
      const wait = Number(refused.headers.get('retry-after'));
      assert.ok(wait >= 1 && wait <= 60, String(wait));
      assert.equal(wait, error.suggested_wait_time);
      assert.equal(
        refused.headers.get('x-ratelimit-limit'),
        String(limit),
        'the headers name the refusing quota',
      );
      assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
      // Each 2 MB page cost about 64 units: the minute's units bought about limit / 64 pages, give
      // or take the four in flight.
      const pageUnits = Math.floor((TASKS * DESCRIPTION.length) / ANSWER_BYTES_PER_UNIT);
      assert.ok(served <= Math.ceil(limit / pageUnits) + 4, `${served} pages served`);
      assert.ok(served >= Math.floor((limit - 4 * TASKS) / (pageUnits + 1)) - 4, `${served} pages served`);

      // The neighbour is not refused, nor slowed by a refusal that is not its own.
      const mine = await p.request<{ tasks: unknown[] }>('GET', '/tasks', { key: light.key });
      assert.equal(mine.status, 200, mine.text);
      assert.equal(mine.body.tasks.length, 1);
      assert.equal(mine.headers.get('x-ratelimit-limit'), String(TIER_LIMITS.free.dailyCalls));
      const again = await p.request('GET', '/tasks?limit=1', { key: heavy.key });
      assert.equal(again.status, 429, 'small requests too, until the minute turns');
      // The rate is the account's, not its key's: another key of the same account gets no fresh minute.
      const viaOther = await p.request('GET', '/tasks?limit=1', { key: spareKey });
      assert.equal(viaOther.status, 429, 'a second key of the account shares its minute');
      assert.equal(errorOf(viaOther).code, 'RATE_LIMITED');
      // The routes without a key have the address rate, not the account's: sent with the spent key, still answered.
      const keyless = await p.request('GET', '/openapi.json', { key: heavy.key });
      assert.equal(keyless.status, 200, 'a keyless route is not counted against the account');

      // The next minute the account has its units again.
      p.clock.advance(60_000);
      const next = await p.request('GET', '/tasks?limit=200', { key: heavy.key });
      assert.equal(next.status, 200, next.text);
    });
  });
}
