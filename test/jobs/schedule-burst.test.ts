import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { accountKeys } from '../../functions/core/accounts/account-keys.ts';
import { advanceDueSchedules, claimSlot } from '../../functions/core/schedules/schedule-fire.ts';
import {
  type Schedule as StoredFields,
  scheduleKeys,
} from '../../functions/core/schedules/schedule-record.ts';
import { createRunLookups } from '../../functions/core/schedules/schedule-run-lookups.ts';
import { runKeys } from '../../functions/core/schedules/schedule-run-record.ts';
import { executeRuns } from '../../functions/core/schedules/schedule-runs.ts';
import { memberKeys } from '../../functions/core/workspaces/member-record.ts';
import { type ScheduleLoop, startScheduleLoop } from '../../functions/jobs/local-schedule-loop.ts';
import { type Item, queryAll, type Store, type TransactOp } from '../../functions/ports/store.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { startRunsPlatform } from '../helpers/schedules.ts';

type Schedule = { id: string; next_run_at: string | null };

/** The store, counting the calls of each method (what a burst costs in store operations). */
function countingStore(store: Store): {
  store: Store;
  calls: Record<string, number>;
  gets: string[];
  transactions: TransactOp[][];
} {
  const calls: Record<string, number> = {};
  const gets: string[] = [];
  const transactions: TransactOp[][] = [];
  const counted = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls[String(prop)] = (calls[String(prop)] ?? 0) + 1;
        if (prop === 'get') gets.push(`${(args[0] as Item).pk}|${(args[0] as Item).sk}`);
        if (prop === 'transactWrite') transactions.push(args[0] as TransactOp[]);
        return value.apply(target, args);
      };
    },
  });
  return { store: counted, calls, gets, transactions };
}

/**
 * A burst of schedules due in the same minute, on the local loop (docs/schedules.md, "Firing";
 * docs/performance.md, "Scheduler"): claimed many to a transaction, run exactly once each, one
 * account's runs held to half its tier's concurrent requests, lookups shared by a pass.
 */
describe('a burst of due schedules on the local loop', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let owner: { key: string; ws: string; accountId: string };
  let loops: ScheduleLoop[] = [];
  let minute = Date.parse('2026-09-01T08:00:00Z');

  const createMany = async (n: number): Promise<Schedule[]> => {
    const out: Schedule[] = [];
    for (let i = 0; i < n; i++) {
      const res = await p.request<Schedule>('POST', `/workspaces/${owner.ws}/schedules`, {
        key: owner.key,
        body: { agent: 'burstco/ticker', cron_expression: '* * * * *' },
      });
      assert.equal(res.status, 201, res.text);
      out.push(res.body);
    }
    return out;
  };
  const disable = async (schedules: Schedule[]) => {
    for (const s of schedules) {
      await p.request('PATCH', `/workspaces/${owner.ws}/schedules/${s.id}`, {
        key: owner.key,
        body: { enabled: false },
      });
    }
  };
  const runsOf = async (id: string) => queryAll(p.deps.store, { pk: runKeys.ofSchedule(id) });
  /** A fresh minute for each test, 30 s before it; returns the slot. */
  const nextMinute = () => {
    minute += 3_600_000;
    p.clock.set(new Date(minute - 30_000));
    return new Date(minute).toISOString();
  };
  const duePage = async (slot: string) =>
    (await p.deps.store.query({ index: 'gsi2', pk: scheduleKeys.due, sk: { lt: `${slot}#~` }, limit: 500 }))
      .items;

  before(async () => {
    fake = await startFakeLlm({ record: false });
    p = await startRunsPlatform(fake, 'sqlite', {}, { inMemory: true });
    const o = await createAccount(p.deps, { org: 'burstco', tier: 'pro' });
    owner = { key: o.api_key, ws: o.workspace_id, accountId: o.account.id };
    const published = await p.request('POST', '/agents', {
      key: owner.key,
      body: { name: 'ticker', description: 'Ticks.', supported_providers: ['anthropic'] },
    });
    assert.equal(published.status, 201, published.text);
  });
  after(async () => {
    for (const loop of loops) await loop.stop();
    await p.close();
    await fake.close();
  });
  beforeEach(async () => {
    for (const loop of loops) await loop.stop();
    loops = [];
    fake.setResponder(() => ({ text: 'tick' }));
  });

  it('claims a page of due schedules from the records it holds, many to a transaction', async () => {
    const slot = nextMinute();
    const schedules = await createMany(120);
    p.clock.set(slot);
    const page = await duePage(slot);
    assert.equal(page.length, 120);
    const counted = countingStore(p.deps.store);
    const advanced = await advanceDueSchedules({ ...p.deps, store: counted.store }, page, p.clock.now());
    // Each schedule is two writes (its next revision, its slot's claim): 50 to a transaction of
    // at most 100, and no schedule read again (one by one: 120 reads and 120 commits).
    assert.equal(counted.calls.transactWrite, 3);
    assert.equal(counted.calls.get ?? 0, 0);
    assert.deepEqual(
      advanced.map((a) => a.slots),
      schedules.map(() => [slot]),
    );
    assert.ok(
      advanced.every((a) => a.stored.schedule.next_run_at === new Date(minute + 60_000).toISOString()),
    );
    // Claimed: the same page again claims nothing, and no other delivery gets a slot.
    assert.deepEqual(await advanceDueSchedules(p.deps, page, p.clock.now()), []);
    assert.equal(await claimSlot(p.deps, (schedules[7] as Schedule).id, slot), false);
    await disable(schedules);
  });

  it('a transaction cancelled by a slot claimed elsewhere is decided again schedule by schedule', async () => {
    const slot = nextMinute();
    const schedules = await createMany(3);
    p.clock.set(slot);
    const page = await duePage(slot);
    const [first, second, third] = schedules as [Schedule, Schedule, Schedule];
    // An EventBridge delivery (or another loop) claimed the second schedule's slot first.
    assert.equal(await claimSlot(p.deps, second.id, slot), true);
    const advanced = await advanceDueSchedules(p.deps, page, p.clock.now());
    const slotsOf = new Map(advanced.map((a) => [a.stored.schedule.id, a.slots]));
    assert.deepEqual(slotsOf.get(first.id), [slot]);
    assert.deepEqual(slotsOf.get(second.id), [], 'the slot claimed elsewhere is not claimed again');
    assert.deepEqual(slotsOf.get(third.id), [slot]);
    // Every one moved past the slot all the same.
    assert.deepEqual(await duePage(slot), []);
    await disable(schedules);
  });

  it('runs every schedule of a burst exactly once for its slot, however many loops race for it', async (t) => {
    const slot = nextMinute();
    const schedules = await createMany(120);
    loops = [0, 1, 2].map(() => startScheduleLoop(p.deps, { timers: false }));
    p.clock.set(slot);
    await Promise.all(loops.map((loop) => loop.tick()));
    await Promise.all(loops.map((loop) => loop.idle()));
    let total = 0;
    for (const s of schedules) {
      const runs = await runsOf(s.id);
      assert.equal(runs.length, 1, `schedule ${s.id} ran ${runs.length} times`);
      const [run] = runs as [Item];
      assert.equal(run.scheduled_time, slot);
      assert.equal(run.status, 'success', String(run.error));
      // A run's start is when its call began: at or after the slot it was claimed for.
      assert.ok(Date.parse(String(run.started_at)) >= Date.parse(slot));
      total += runs.length;
    }
    t.diagnostic(`120 schedules due at once, three racing loops: ${total} runs`);
    await disable(schedules);
  });

  it('holds one account’s runs at once to half its tier’s concurrent requests', async (t) => {
    const slot = nextMinute();
    const schedules = await createMany(40);
    // Calls that take a while, so the runs overlap.
    fake.setResponder(() => ({ text: 'tick', delayMs: 300 }));
    const loop = startScheduleLoop(p.deps, { timers: false });
    loops = [loop];
    p.clock.set(slot);
    await loop.tick();
    let peak = 0;
    let done = false;
    const idle = loop.idle().then(() => {
      done = true;
    });
    while (!done) {
      const inflight = await queryAll(p.deps.store, { index: 'gsi2', pk: scheduleKeys.inflightDue });
      peak = Math.max(peak, inflight.length);
      await new Promise((r) => setTimeout(r, 20));
    }
    await idle;
    // Pro: 50 concurrent requests, so 25 scheduled runs at once, the other 25 for its API calls.
    t.diagnostic(`40 runs of one pro account due at once: at most ${peak} in flight`);
    assert.equal(peak, 25);
    for (const s of schedules) assert.equal((await runsOf(s.id)).length, 1);
    await disable(schedules);
  });

  it('a pass’s runs read their creator’s account and membership once', async () => {
    const counted = countingStore(p.deps.store);
    const lookups = createRunLookups({ ...p.deps, store: counted.store });
    const stored = await p.deps.store.query({
      index: 'gsi1',
      pk: scheduleKeys.ofWorkspace(owner.ws),
      limit: 50,
    });
    const schedules = stored.items.map((i) => i as unknown as StoredFields);
    assert.ok(schedules.length >= 40);
    const auths = await Promise.all(schedules.map((s) => lookups.auth(s)));
    assert.ok(
      auths.every((a, i) => a.accountId === owner.accountId && a.keyId === `schedule:${schedules[i]?.id}`),
    );
    assert.ok(auths.every((a) => a.runWorkspaceId === owner.ws));
    await Promise.all(schedules.map((s) => lookups.version(s)));
    const account = accountKeys.account(owner.accountId);
    const member = memberKeys.member(owner.ws, owner.accountId);
    assert.equal(counted.gets.filter((k) => k === `${account.pk}|${account.sk}`).length, 1);
    assert.equal(counted.gets.filter((k) => k === `${member.pk}|${member.sk}`).length, 1);
    // One version: its pointer and its record, once.
    assert.equal(counted.calls.get, 4);
    // A fresh set of lookups (the next pass) reads again: a removal is seen by the next pass.
    await createRunLookups({ ...p.deps, store: counted.store }).auth(schedules[0] as StoredFields);
    assert.equal(counted.gets.filter((k) => k === `${account.pk}|${account.sk}`).length, 2);
  });

  it('a batch of runs writes its in-flight markers together, then every call begins', async () => {
    const stored = await p.deps.store.query({
      index: 'gsi1',
      pk: scheduleKeys.ofWorkspace(owner.ws),
      limit: 150,
    });
    const schedules = stored.items.map((i) => i as unknown as StoredFields).slice(0, 120);
    assert.equal(schedules.length, 120);
    const counted = countingStore(p.deps.store);
    const deps = { ...p.deps, store: counted.store };
    const lookups = createRunLookups(deps);
    const started = await executeRuns(
      deps,
      schedules.map((schedule) => ({
        schedule,
        input: {},
        trigger: 'manual' as const,
        options: { lookups },
      })),
    );
    // Resolved when all have begun: every marker written, 100 to a transaction (one put per run was
    // a commit each), before any run's record.
    const markers = (ops: TransactOp[]) =>
      ops.filter((op) => 'put' in op && op.put.sk.startsWith('INFLIGHT#'));
    const withMarkers = counted.transactions.filter((ops) => markers(ops).length > 0);
    assert.deepEqual(
      withMarkers.map((ops) => markers(ops).length),
      [100, 20],
    );
    assert.equal(counted.calls.put ?? 0, 0);
    const records = await Promise.all(started);
    assert.equal(records.length, 120);
    assert.ok(records.every((r) => r.status === 'success'));
    // Each run's marker went with its record.
    assert.deepEqual(await queryAll(p.deps.store, { index: 'gsi2', pk: scheduleKeys.inflightDue }), []);
  });
});
