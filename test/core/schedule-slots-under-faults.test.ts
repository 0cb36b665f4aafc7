/**
 * A schedule's slot runs at most once (its `SLOT#` claim under `notExists`), and a schedule's
 * counters (`rev` condition, retried) count every run, also on DynamoDB as the service behaves
 * under contention: DynamoDB Local behind the fault injector (helpers/dynamodb-faults.ts), which
 * cancels a share of transactions with TransactionConflict, refuses a share of writes with
 * TransactionConflictException and throttles a share of requests. A refused claim is not a claim
 * someone else won: every slot still runs once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { fireScheduledSlot } from '../../functions/core/schedules/schedule-fire.ts';
import { runKeys } from '../../functions/core/schedules/schedule-run-record.ts';
import { queryAll } from '../../functions/ports/store.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { startRunsPlatform } from '../helpers/schedules.ts';

describe('schedule slots on DynamoDB Local with faults', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let owner: { key: string; ws: string };

  before(async () => {
    fake = await startFakeLlm({ record: false });
    fake.setResponder(() => ({ text: 'tick' }));
    p = await startRunsPlatform(fake, 'dynamodb-faults', {}, { inMemory: true });
    const o = await createAccount(p.deps, { org: 'faultco', tier: 'pro' });
    owner = { key: o.api_key, ws: o.workspace_id };
    const published = await p.request('POST', '/agents', {
      key: owner.key,
      body: { name: 'ticker', description: 'Ticks.', supported_providers: ['anthropic'] },
    });
    assert.equal(published.status, 201, published.text);
  });
  after(async () => {
    await p.close();
    await fake.close();
  });

  it('runs each of 5 slots exactly once while 10 deliveries race for each, and counts 5 runs', async (t) => {
    p.clock.set('2026-08-01T08:00:00Z');
    const created = await p.request<{ id: string }>('POST', `/workspaces/${owner.ws}/schedules`, {
      key: owner.key,
      body: { agent: 'faultco/ticker', cron_expression: '0 * * * *' },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;
    let fired = 0;
    for (let hour = 9; hour <= 13; hour++) {
      const slot = `2026-08-01T${String(hour).padStart(2, '0')}:00:00.000Z`;
      p.clock.set(slot);
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, () => fireScheduledSlot(p.deps, id, slot)),
      );
      assert.equal(outcomes.filter((o) => o.fired).length, 1, `slot ${slot} ran once`);
      for (const o of outcomes) if (!o.fired) assert.equal(o.reason, 'duplicate');
      fired++;
    }
    const runs = await queryAll(p.deps.store, { pk: runKeys.ofSchedule(id) });
    assert.equal(runs.length, fired);
    assert.deepEqual(new Set(runs.map((r) => r.scheduled_time)).size, fired);
    const schedule = await p.request<{ total_runs: number }>(
      'GET',
      `/workspaces/${owner.ws}/schedules/${id}`,
      {
        key: owner.key,
      },
    );
    assert.equal(schedule.body.total_runs, fired);
    const faults = p.faults;
    assert.ok(faults && faults.conflicts + faults.writeConflicts > 0, 'the injector refused writes');
    t.diagnostic(`${fired} slots, 10 deliveries each; injected: ${JSON.stringify(faults)}`);
  });
});
