import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiKeyKeys } from '../../functions/core/api-keys/api-key-items.ts';
import {
  recordedServiceKey,
  type ServiceContext,
  spendDownstreamBudget,
} from '../../functions/core/calls/service-keys.ts';
import { recordedSteps, storeRunRecorder } from '../../functions/core/runs/recorded-steps.ts';
import { runStepKeys } from '../../functions/core/runs/run-step-record.ts';
import { queryAll } from '../../functions/ports/store.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/**
 * The store's recorder of runs' steps (core/runs/recorded-steps.ts), which the local platform
 * carries runs on with: a step runs once and is answered from its record after, through JSON; a
 * large outcome goes to the bundle store; a run ended leaves neither its open entry nor its steps
 * (they hold its input and its model's answers). Across a restart: test/platform/run-carried-on.test.ts.
 */
describe('runs’ recorded steps in the store', () => {
  let p: TestPlatform;
  const keep = () => Date.now() + 3_600_000;
  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
  });
  after(() => p.close());

  it('runs a step once; a replay answers its outcome through JSON, a large one from the bundle store', async () => {
    const runId = '0193a5c2-0000-7000-8000-000000000001';
    const first = await recordedSteps(p.deps, runId, keep());
    let ran = 0;
    const at = new Date('2026-11-28T12:00:00Z');
    const outcome = await first.step('model-0', async () => {
      ran++;
      return { at, n: 1 };
    });
    // The run that recorded it goes on with what a replay will get: the date as its JSON text.
    assert.deepEqual(outcome, { at: at.toISOString(), n: 1 });
    const large = 'x'.repeat(100 * 1024);
    await first.step('tool-big', async () => ({ text: large }));
    await assert.rejects(
      first.step('tool-failed', async () => Promise.reject(new Error('no'))),
      /no/,
    );

    const replay = await recordedSteps(p.deps, runId, keep());
    assert.deepEqual(
      await replay.step('model-0', async () => {
        ran++;
        return { n: 2 };
      }),
      { at: at.toISOString(), n: 1 },
    );
    assert.equal(ran, 1);
    assert.equal((await replay.step('tool-big', async () => ({ text: 'other' }))).text, large);
    // A step that threw was not recorded: it runs again.
    assert.equal(await replay.step('tool-failed', async () => 'now'), 'now');
    const items = await queryAll(p.deps.store, { pk: runStepKeys.ofRun(runId) });
    const big = items.find((i) => String(i.sk).endsWith('tool-big'));
    assert.equal(big?.outcome, null, 'a large outcome is kept apart from its item');
  });

  it('lists the runs opened and not ended; a run ended leaves neither its entry nor its steps', async () => {
    const recorder = storeRunRecorder(p.deps);
    const run = {
      run_id: '0193a5c2-0000-7000-8000-000000000002',
      account_id: 'acct-1',
      deadline_at: new Date(Date.now() + 60_000).toISOString(),
    };
    await recorder.opened(run);
    const steps = await recorder.steps(run.run_id, keep());
    await steps.step('input', async () => ({ input: { secret: 'the caller’s words' } }));
    assert.deepEqual(
      (await recorder.unended()).map((r) => r.run_id),
      [run.run_id],
    );
    await recorder.ended(run);
    assert.deepEqual(await recorder.unended(), []);
    assert.deepEqual(await queryAll(p.deps.store, { pk: runStepKeys.ofRun(run.run_id) }), []);
  });

  it('carries an orchestrator’s spent budget over every replay, each time from the key the last one issued', async () => {
    const runId = '0193a5c2-0000-7000-8000-000000000003';
    const context: ServiceContext = {
      run_id: 'req_orchestrated',
      orchestrator: 'lab/augur/v1',
      dependencies: ['lab/oracle/v1'],
      hops_remaining: 1,
      deadline_ms: Date.now() + 60_000,
      budget: 10,
      strict: false,
    };
    const spent = async (hash: string) =>
      Number((await p.deps.store.get(apiKeyKeys.runCredential(hash)))?.credits_spent ?? 0);
    // Each process that runs the run (the first, then each that carries it on) reads its steps anew.
    const inProcess = async () =>
      recordedServiceKey(p.deps, await recordedSteps(p.deps, runId, keep()), 'acct-1', context);
    const first = await inProcess();
    await spendDownstreamBudget(p.deps, first.hash, 4, context.budget);
    // Carried on once: a new key with the 4 spent; the first one revoked.
    const second = await inProcess();
    assert.notEqual(second.hash, first.hash);
    assert.equal(await spent(second.hash), 4);
    assert.equal(await p.deps.store.get(apiKeyKeys.runCredential(first.hash)), undefined);
    await spendDownstreamBudget(p.deps, second.hash, 4, context.budget);
    // Carried on again: from the second key, 8 spent; 4 more would pass the budget of 10.
    const third = await inProcess();
    assert.equal(await spent(third.hash), 8);
    await assert.rejects(
      spendDownstreamBudget(p.deps, third.hash, 4, context.budget),
      /per_call_downstream_cap/,
    );
  });
});
