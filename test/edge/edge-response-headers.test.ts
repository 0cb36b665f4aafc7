import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { authenticate } from '../../functions/core/api-keys/api-keys.ts';
import { responseHeaders } from '../../functions/edge/response-headers.ts';
import type { Deps } from '../../functions/platform/deps.ts';
import type { Store } from '../../functions/ports/store.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/*
 * The headers of every answer (functions/edge/response-headers.ts) are built from what the
 * request's units counted: building them reads, and never writes. A request no
 * unit counted shows no rate limit rather than being counted while its answer is built.
 */

const WRITES = new Set(['put', 'update', 'delete', 'atomicAdd', 'transactWrite']);

/** `store`, with every write it is asked for recorded by name. */
function recording(store: Store, writes: string[]): Store {
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (WRITES.has(String(name))) writes.push(String(name));
        return value.apply(target, args);
      };
    },
  });
}

describe('the headers of every answer', () => {
  let p: TestPlatform;
  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
  });
  after(() => p.close());

  it('show the caller’s quota, or the address’s count, and write nothing', async () => {
    const writes: string[] = [];
    const deps: Deps = { ...p.deps, store: recording(p.deps.store, writes) };
    const { key } = await p.createAccount('headersco');
    const auth = await authenticate(p.deps, `Bearer ${key}`, { acceptRunCredential: false });

    const keyed = await responseHeaders({ requestId: 'req_1', origin: undefined, deps, auth });
    assert.equal(keyed['X-Request-Id'], 'req_1');
    assert.match(keyed['X-RateLimit-Limit'] ?? '', /^\d+$/);

    const counted = await responseHeaders({
      requestId: 'req_2',
      origin: undefined,
      deps,
      addressAdmission: { refused: false, state: { limit: 60, remaining: 59, reset: 1 } },
    });
    assert.equal(counted['X-RateLimit-Remaining'], '59');

    const uncounted = await responseHeaders({ requestId: 'req_3', origin: undefined, deps });
    assert.equal(uncounted['X-RateLimit-Limit'], undefined);
    assert.deepEqual(writes, [], 'building headers wrote to the store');
  });
});
