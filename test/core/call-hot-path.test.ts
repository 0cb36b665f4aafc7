/**
 * The work one successful prompt-agent call does through the local platform, where the gateway
 * bench's profile found waste (docs/performance.md, "Call gateway overhead"): how many store
 * operations it makes, counted through the Store port (a counting proxy around the deps' store), so
 * a change that adds a read to the call path, or reads again what an earlier step of the same call
 * already has, fails here; that the model is not reached through the global fetch; and that no
 * abort is made.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import type { ItemKey, Store, TransactOp } from '../../functions/ports/store.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { statementsRun } from '../helpers/sqlite-statements.ts';

/**
 * A successful prompt call: the key and its account (authentication), the version's ref and item,
 * the caller's membership of the agent's workspace (visibility), the admission's writes and the
 * completion's (Store.writeEach: one commit each here), and today's counter for the X-RateLimit headers (docs/performance.md).
 */
const MAX_STORE_OPERATIONS = 8;

/** The store, with every operation but close() noted as `method key…` in `ops`. */
function counting(inner: Store, ops: string[]): Store {
  const keyOf = (k: ItemKey | undefined) => `${k?.pk}|${k?.sk}`;
  const describe = (method: string, first: unknown): string => {
    if (method === 'transactWrite') {
      const keys = (first as TransactOp[]).map((op) =>
        keyOf('put' in op ? op.put : 'update' in op ? op.update : 'delete' in op ? op.delete : op.check),
      );
      return `${method} ${keys.join(' ')}`;
    }
    if (method === 'query') return `${method} ${(first as { pk: string }).pk}`;
    return `${method} ${keyOf(first as ItemKey)}`;
  };
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      // asOneRequest wraps a request's handling: not an operation of its own.
      if (typeof value !== 'function' || prop === 'close' || prop === 'asOneRequest') return value;
      return (...args: unknown[]) => {
        ops.push(describe(String(prop), args[0]));
        return value.apply(target, args);
      };
    },
  });
}

describe('the work of one prompt call', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let key: string;
  const ops: string[] = [];

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform(
      { OPENAI_API_KEY: 'sk-openai-test', OPENAI_BASE_URL: fake.baseUrls.openai },
      'sqlite',
      {},
      { inMemory: true },
    );
    key = (await createAccount(p.deps, { org: 'opsco', tier: 'pro' })).api_key;
    const published = await p.request('POST', '/agents', {
      key,
      body: {
        name: 'say',
        description: 'Says.',
        supported_providers: ['openai'],
        prompt_template: 'Say {{word}}',
      },
    });
    assert.equal(published.status, 201, published.text);
    p.deps.store = counting(p.deps.store, ops);
  });
  after(async () => {
    await p.close();
    await fake.close();
  });

  it(`makes at most ${MAX_STORE_OPERATIONS} store operations and reads no key twice`, async () => {
    fake.enqueue({ text: 'hi' });
    ops.length = 0;
    const res = await p.request('POST', '/opsco/say/v1/run', { key, body: { word: 'hi' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(
      res.headers.get('x-ratelimit-remaining'),
      String(Number(res.headers.get('x-ratelimit-limit')) - 1),
    );
    assert.ok(ops.length <= MAX_STORE_OPERATIONS, `${ops.length} operations:\n${ops.join('\n')}`);
    const reads = ops.filter((op) => op.startsWith('get '));
    assert.deepEqual(reads, [...new Set(reads)], `a key read twice:\n${ops.join('\n')}`);
  });

  // `PRAGMA data_version` (a read transaction: four file-lock system calls) was before each of a
  // call's reads outside a transaction, eight a call; the local server now has the store look once
  // per request (SqliteStore.asOneRequest), and each of the call's two transactions looks as it begins.
  it('looks for other connections’ commits three times: as the request arrives and as each of its two transactions begins', async () => {
    const looks = await statementsRun('PRAGMA data_version', async () => {
      fake.enqueue({ text: 'hi' });
      const res = await p.request('POST', '/opsco/say/v1/run', { key, body: { word: 'hi' } });
      assert.equal(res.status, 200, res.text);
    });
    assert.equal(looks, 3);
  });

  // The model is reached through undici's pooled request API locally (adapters/llm/pooled-fetch.ts):
  // the global fetch's web streams were about a fifth of the CPU of a call (docs/performance.md).
  it('reaches the model without the global fetch', async () => {
    const original = globalThis.fetch;
    let used = 0;
    globalThis.fetch = (...args: Parameters<typeof fetch>) => {
      const target = String(args[0] instanceof Request ? args[0].url : args[0]);
      if (target.startsWith(fake.baseUrls.openai)) used++;
      return original(...args);
    };
    try {
      fake.enqueue({ text: 'hi' });
      const res = await p.request('POST', '/opsco/say/v1/run', { key, body: { word: 'hi' } });
      assert.equal(res.status, 200, res.text);
    } finally {
      globalThis.fetch = original;
    }
    assert.equal(used, 0);
  });

  // An abort after the call has finished cost about 100 µs (its event and a DOMException).
  it('makes no abort when the call succeeds', async () => {
    const original = AbortController.prototype.abort;
    let aborts = 0;
    AbortController.prototype.abort = function (this: AbortController, reason?: unknown) {
      aborts++;
      return original.call(this, reason);
    };
    try {
      fake.enqueue({ text: 'hi' });
      const res = await p.request('POST', '/opsco/say/v1/run', { key, body: { word: 'hi' } });
      assert.equal(res.status, 200, res.text);
    } finally {
      AbortController.prototype.abort = original;
    }
    assert.equal(aborts, 0);
  });
});
