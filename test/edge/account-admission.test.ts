import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TIER_LIMITS } from '../../functions/core/accounts/tiers.ts';
import { type AuthContext, authenticate } from '../../functions/core/api-keys/api-keys.ts';
import { ANSWER_BYTES_PER_UNIT, chargeAnswerBytes } from '../../functions/core/usage/account-request-rate.ts';
import { admitAccount, chargeAnswer } from '../../functions/edge/account-admission.ts';
import { protocolAnswer, sseAnswer } from '../../functions/edge/answers.ts';
import type { RequestScope } from '../../functions/edge/edge-context.ts';
import type { Deps } from '../../functions/platform/deps.ts';
import { type OperationId, routes } from '../../functions/platform/routes.ts';
import { PlatformError } from '../../functions/shared/errors.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/*
 * The account's request rate at the edge (functions/edge/account-admission.ts): a keyed route
 * counts one unit before its body is read, the agent call does not (its own admission counts it),
 * and an answer's bytes are charged after it, beside it (waitUntil), refusing the next request.
 */

const LIMIT = TIER_LIMITS.free.requestUnitsPerMinute;

describe('account admission (edge unit)', () => {
  let p: TestPlatform;
  let n = 0;
  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
  });
  after(() => p.close());

  /** A free account of its own (the core remembers spent accounts per process). */
  async function account(): Promise<AuthContext> {
    const { key } = await p.createAccount(`admitco${++n}`, 'free');
    return authenticate(p.deps, `Bearer ${key}`);
  }

  function scopeOf(id: OperationId, auth: AuthContext | undefined, deps: Deps = p.deps) {
    const pending: Promise<unknown>[] = [];
    const scope: RequestScope = {
      requestId: 'req_admission',
      address: '198.51.100.7',
      origin: undefined,
      deps,
      waitUntil: (work) => pending.push(work),
      route: { id, def: routes[id] },
      ...(auth ? { auth } : {}),
    };
    return { scope, pending };
  }

  /** Spends `units` of the account's current minute as earlier answers would have. */
  const spend = (auth: AuthContext, units: number) =>
    chargeAnswerBytes(p.deps, auth, units * ANSWER_BYTES_PER_UNIT);

  it('admits the minute’s last unit and refuses the next with 429, quota requests', async () => {
    const auth = await account();
    await spend(auth, LIMIT - 1);
    const { scope } = scopeOf('listTasks', auth);
    await admitAccount(scope);
    const refused = await admitAccount(scope).then(
      () => assert.fail('admitted past the minute’s units'),
      (err: unknown) => err,
    );
    assert.ok(refused instanceof PlatformError);
    assert.equal(refused.code, 'RATE_LIMITED');
    const minuteEnd = Math.floor(p.clock.now().getTime() / 60_000) * 60 + 60;
    assert.deepEqual(refused.details, {
      suggested_wait_time: minuteEnd - p.clock.now().getTime() / 1000,
      limit: LIMIT,
      reset: minuteEnd,
      quota: 'requests',
    });
  });

  it('does not count the agent call: its own admission does', async () => {
    const auth = await account();
    await spend(auth, LIMIT);
    await admitAccount(scopeOf('callAgent', auth).scope);
    await assert.rejects(admitAccount(scopeOf('listTasks', auth).scope), { code: 'RATE_LIMITED' });
  });

  it('charges an answer’s whole units after it, through waitUntil, so they refuse the next request', async () => {
    const auth = await account();
    await spend(auth, LIMIT - 3);
    const { scope, pending } = scopeOf('listTasks', auth);
    // Two units and a byte short of a third: two are charged.
    chargeAnswer(scope, protocolAnswer(200, {}, 'x'.repeat(3 * ANSWER_BYTES_PER_UNIT - 1)));
    assert.equal(pending.length, 1, 'the charge is left to waitUntil');
    await Promise.all(pending);
    await admitAccount(scope); // the minute's last unit
    await assert.rejects(admitAccount(scope), { code: 'RATE_LIMITED' });
  });

  it('charges nothing for an answer under a unit, a streamed answer, or the agent call', async () => {
    const auth = await account();
    await spend(auth, LIMIT - 1);
    const small = scopeOf('listTasks', auth);
    chargeAnswer(small.scope, protocolAnswer(200, {}, 'x'.repeat(ANSWER_BYTES_PER_UNIT - 1)));
    const streamed = scopeOf('listTasks', auth);
    chargeAnswer(streamed.scope, sseAnswer(new ReadableStream({ start: (c) => c.close() })));
    const call = scopeOf('callAgent', auth);
    chargeAnswer(call.scope, protocolAnswer(200, {}, 'x'.repeat(4 * ANSWER_BYTES_PER_UNIT)));
    await Promise.all([...small.pending, ...streamed.pending, ...call.pending]);
    await admitAccount(small.scope); // still the minute's last unit
    await assert.rejects(admitAccount(small.scope), { code: 'RATE_LIMITED' });
  });

  it('logs a charge that fails and never fails the answer already sent', async () => {
    const auth = await account();
    const store = new Proxy(p.deps.store, {
      get: (target, name, receiver) =>
        name === 'atomicAdd'
          ? () => Promise.reject(new Error('store unreachable'))
          : Reflect.get(target, name, receiver),
    });
    const { scope, pending } = scopeOf('listTasks', auth, { ...p.deps, store });
    chargeAnswer(scope, protocolAnswer(200, {}, 'x'.repeat(ANSWER_BYTES_PER_UNIT)));
    await Promise.all(pending);
    assert.ok(
      p.logs.some(
        (line) => line.includes('request rate charge failed') && line.includes('store unreachable'),
      ),
    );
  });
});
