/**
 * The idempotency helper (functions/core/idempotency/idempotent.ts) on both stores (SQLite, and
 * DynamoDB through DynamoDB Local, AWS's own engine): the first attempt runs once however many
 * repeats race it, a repeat answers the first outcome (waiting for it while it runs), a failed first
 * attempt is told at once, a first attempt past its lease is given up on, and once the window has
 * passed the key runs again. Records in the shape the webhook trigger stored before the helper
 * existed read the same.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import * as z from 'zod';
import { parseStored } from '../../functions/core/entity.ts';
import { idempotent, type OutcomeCodec } from '../../functions/core/idempotency/idempotent.ts';
import type { ItemKey, Store } from '../../functions/ports/store.ts';
import { PlatformError } from '../../functions/shared/errors.ts';
import { FakeClock } from '../helpers/fake-clock.ts';
import { dynamoDbLocalBackend, type StoreBackend, sqliteBackend } from '../helpers/store-backends.ts';

const backends: [string, () => Promise<StoreBackend>][] = [
  ['SQLite', sqliteBackend],
  ['DynamoDB Local', () => dynamoDbLocalBackend('agenthost-idempotent')],
];

const outcomeSchema = z.object({ text: z.string(), n: z.number() });
type Outcome = z.output<typeof outcomeSchema>;
const codec: OutcomeCodec<Outcome> = {
  encode: (o) => ({ text: o.text, n: o.n }),
  decode: (stored, where) => parseStored('test outcome', outcomeSchema, stored, where),
};

const WINDOW_SECONDS = 3600;
const LEASE_MS = 60_000;

/** A promise and the hands that settle it, to hold a first attempt running as long as a test needs. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const unfinished = (err: unknown) =>
  err instanceof PlatformError &&
  err.code === 'CONFLICT' &&
  /did not finish; retry with a new key/.test(err.message);

for (const [name, start] of backends) {
  describe(`idempotent() on ${name}`, () => {
    let backend: StoreBackend;
    let store: Store;
    const clock = new FakeClock('2026-06-01T10:00:00Z');
    const deps = () => ({ store, clock });
    const freshKey = (): ItemKey => ({ pk: `IDEMTEST#${randomUUID()}`, sk: 'IDEM#k' });
    const options = (key: ItemKey, sleep?: (ms: number) => Promise<void>) => ({
      key,
      windowSeconds: WINDOW_SECONDS,
      leaseMs: LEASE_MS,
      sleep,
    });

    before(async () => {
      backend = await start();
      store = backend.open(() => Math.floor(clock.now().getTime() / 1000));
    });
    after(async () => {
      await store.close();
      await backend.close();
    });

    it('runs the first attempt and stores its outcome under the record’s fields', async () => {
      const key = freshKey();
      const ids: string[] = [];
      const startedAt = clock.now().getTime();
      const first = await idempotent(
        deps(),
        options(key),
        async (attemptId) => {
          ids.push(attemptId);
          return { text: 'first', n: 1 };
        },
        codec,
      );
      assert.deepEqual(first, { outcome: { text: 'first', n: 1 }, repeated: false });
      assert.equal(ids.length, 1);
      const stored = await store.get(key);
      assert.deepEqual(stored, {
        ...key,
        state: 'done',
        run_id: ids[0],
        lease_until: startedAt + LEASE_MS,
        ttl: Math.floor(startedAt / 1000) + WINDOW_SECONDS,
        run: { text: 'first', n: 1 },
      });
    });

    it('answers a repeat within the window with the first outcome, running nothing', async () => {
      const key = freshKey();
      await idempotent(deps(), options(key), async () => ({ text: 'first', n: 1 }), codec);
      clock.advance((WINDOW_SECONDS - 1) * 1000);
      let ran = false;
      const repeat = await idempotent(
        deps(),
        options(key),
        async () => {
          ran = true;
          return { text: 'second', n: 2 };
        },
        codec,
      );
      assert.deepEqual(repeat, { outcome: { text: 'first', n: 1 }, repeated: true });
      assert.equal(ran, false);
    });

    it('makes racing repeats wait for the running first attempt, with backoff, and answer its outcome', async () => {
      const key = freshKey();
      const started = deferred<void>();
      const release = deferred<Outcome>();
      let runs = 0;
      const work = async () => {
        runs++;
        started.resolve();
        return release.promise;
      };
      const first = idempotent(deps(), options(key), work, codec);
      await started.promise;
      // Each repeat's waits are recorded and end at once (a macrotask, so the store's I/O goes on
      // meanwhile); once every repeat has found the record running and one has looked at it eight
      // times, the first finishes (a repeat whose first look the store answered late would otherwise
      // find the outcome already there, and wait for nothing).
      const waits: number[][] = [];
      const recorder = () => {
        const mine: number[] = [];
        waits.push(mine);
        return async (ms: number) => {
          mine.push(ms);
          if (waits.every((w) => w.length > 0) && waits.some((w) => w.length >= 8)) {
            release.resolve({ text: 'once', n: 42 });
          }
          await new Promise((r) => setImmediate(r));
        };
      };
      const repeats = await Promise.all(
        Array.from({ length: 5 }, () => idempotent(deps(), options(key, recorder()), work, codec)),
      );
      assert.deepEqual(await first, { outcome: { text: 'once', n: 42 }, repeated: false });
      for (const r of repeats) assert.deepEqual(r, { outcome: { text: 'once', n: 42 }, repeated: true });
      assert.equal(runs, 1, 'the work ran once');
      // Every repeat waited, its waits doubling from 20 ms up to the 500 ms cap.
      assert.equal(waits.length, 5);
      for (const mine of waits) {
        assert.ok(mine.length > 0);
        assert.deepEqual(
          mine,
          mine.map((_, i) => Math.min(500, 20 * 2 ** i)),
        );
      }
    });

    it('tells a repeat of a failed first attempt at once; the failure itself reaches the first caller', async () => {
      const key = freshKey();
      await assert.rejects(
        idempotent(
          deps(),
          options(key),
          async () => {
            throw new Error('the run could not be recorded');
          },
          codec,
        ),
        /the run could not be recorded/,
      );
      assert.equal((await store.get(key))?.state, 'failed');
      let waited = 0;
      const sleep = async () => {
        waited++;
      };
      let ran = false;
      const work = async () => {
        ran = true;
        return { text: 'again', n: 2 };
      };
      await assert.rejects(idempotent(deps(), options(key, sleep), work, codec), unfinished);
      assert.equal(waited, 0, 'refused without waiting for the lease');
      assert.equal(ran, false);
    });

    it('gives up on a first attempt past its lease: at once when it has passed, and while waiting when it passes', async () => {
      const key = freshKey();
      const started = deferred<void>();
      const never = deferred<Outcome>();
      // A first attempt whose process died: it claimed the key and never settles.
      void idempotent(
        deps(),
        options(key),
        async () => {
          started.resolve();
          return never.promise;
        },
        codec,
      );
      await started.promise;

      // A repeat waiting on it: each wait moves the clock on, until the lease has passed.
      const waits: number[] = [];
      const sleep = async (ms: number) => {
        waits.push(ms);
        clock.advance(ms);
      };
      const leaseEnds = clock.now().getTime() + LEASE_MS;
      await assert.rejects(
        idempotent(deps(), options(key, sleep), async () => ({ text: 'no', n: 0 }), codec),
        unfinished,
      );
      assert.ok(clock.now().getTime() > leaseEnds, 'refused only once the lease had passed');
      assert.ok(waits.length > 1);

      // Past the lease (but within the window): the next repeat is refused at once.
      let waited = 0;
      await assert.rejects(
        idempotent(
          deps(),
          options(key, async () => {
            waited++;
          }),
          async () => ({ text: 'no', n: 0 }),
          codec,
        ),
        unfinished,
      );
      assert.equal(waited, 0);
      assert.equal((await store.get(key))?.state, 'running', 'the key stays refused, not taken over');
    });

    it('runs the key again once the window has passed (the record’s ttl)', async () => {
      const key = freshKey();
      const first = await idempotent(deps(), options(key), async () => ({ text: 'first', n: 1 }), codec);
      clock.advance(WINDOW_SECONDS * 1000);
      const renewed = clock.now().getTime();
      const again = await idempotent(deps(), options(key), async () => ({ text: 'second', n: 2 }), codec);
      assert.deepEqual(first.outcome, { text: 'first', n: 1 });
      assert.deepEqual(again, { outcome: { text: 'second', n: 2 }, repeated: false });
      assert.equal((await store.get(key))?.ttl, Math.floor(renewed / 1000) + WINDOW_SECONDS);
    });

    it('leaves no record behind when the first attempt outlives the window', async () => {
      // An update of a missing (or expired) item creates one, without a ttl: a key remembered forever.
      const key = freshKey();
      const outcome = await idempotent(
        deps(),
        options(key),
        async () => {
          clock.advance((WINDOW_SECONDS + 1) * 1000);
          return { text: 'late', n: 3 };
        },
        codec,
      );
      assert.deepEqual(outcome, { outcome: { text: 'late', n: 3 }, repeated: false });
      assert.equal(await store.get(key), undefined);
      const failing = freshKey();
      await assert.rejects(
        idempotent(
          deps(),
          options(failing),
          async () => {
            clock.advance((WINDOW_SECONDS + 1) * 1000);
            throw new Error('late failure');
          },
          codec,
        ),
        /late failure/,
      );
      assert.equal(await store.get(failing), undefined);
    });

    it('reads a record in the shape the webhook trigger stored before the helper', async () => {
      const key = freshKey();
      const now = clock.now().getTime();
      await store.put({
        ...key,
        run_id: randomUUID(),
        state: 'done',
        lease_until: now + LEASE_MS,
        ttl: Math.floor(now / 1000) + WINDOW_SECONDS,
        run: { text: 'stored earlier', n: 7 },
      });
      const repeat = await idempotent(deps(), options(key), async () => ({ text: 'no', n: 0 }), codec);
      assert.deepEqual(repeat, { outcome: { text: 'stored earlier', n: 7 }, repeated: true });
      // The previous build's failure mark: an update without a condition, which left only the state.
      const marked = freshKey();
      await store.update(marked, { set: { state: 'failed' } });
      await assert.rejects(
        idempotent(deps(), options(marked), async () => ({ text: 'no', n: 0 }), codec),
        unfinished,
      );
    });
  });
}
