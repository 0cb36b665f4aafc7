import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { callRecordKeys, fromCallRecordItem } from '../../functions/core/usage/call-records.ts';
import { dailyCounterKeys, utcDay } from '../../functions/core/usage/daily-usage.ts';
import { queryAll } from '../../functions/ports/store.ts';
import {
  type FakeLlmProviders,
  type FakeLlmResponse,
  start as startFakeLlm,
} from '../helpers/fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { runningCommands } from '../helpers/running-commands.ts';
import { waitFor } from '../helpers/wait-for.ts';

const use = (name: string, input: unknown): FakeLlmResponse => ({ toolCalls: [{ name, input }] });

/** A shell command, run by the loop's bash tool, that calls an agent with the run's service key. */
const callWithServiceKey = (path: string) =>
  `node -e "fetch(process.env.PLATFORM_API_URL+'${path}',{method:'POST',headers:{authorization:'Bearer '+process.env.PLATFORM_SERVICE_KEY,'content-type':'application/json'},body:'{}'}).then(async r=>console.log('HTTP '+r.status+' '+(await r.text()).slice(0,300)))"`;

describe('orchestration: service keys, hop limits and sub-calls', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let owner: { key: string; id: string };

  /** A loop agent whose one dependency is `dependency` (org/name, v1). */
  const relay = (name: string, description: string, dependency: string, maxHops = 2) => ({
    name,
    type: 'agent',
    description,
    supported_providers: ['anthropic'],
    required_secrets: [],
    custom_tools: [{ name: 'call_dep', description: 'calls the dependency', command: `echo ${dependency}` }],
    manifest: {
      manifest_version: 1,
      dependencies: [{ id: dependency, version: 'v1' }],
      max_hops: maxHops,
      timeout_ms: 60_000,
      orchestration_mode: 'flexible',
    },
  });

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform({
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
    });
    const o = await createAccount(p.deps, { org: 'orch', tier: 'pro' });
    owner = { key: o.api_key, id: o.account.id };
    const publish = async (body: Record<string, unknown>) => {
      const res = await p.request('POST', '/agents?allow_no_secrets=true', { key: owner.key, body });
      assert.equal(res.status, 201, res.text);
    };
    await publish({
      name: 'leaf',
      type: 'tool',
      description: 'leaf',
      supported_providers: ['any'],
      runtime: { command: 'echo {}' },
    });
    await publish({
      name: 'hidden',
      type: 'tool',
      description: 'hidden',
      supported_providers: ['any'],
      runtime: { command: 'echo {}' },
      callable: false,
    });
    // A chain relay-a -> relay-b -> relay-c -> leaf: a run credential reaches only declared
    // dependencies, and publishing refuses dependency cycles, so the hop limit is met on a chain.
    await publish(relay('relay-c', 'Relay C: calls the leaf.', 'orch/leaf'));
    await publish(relay('relay-b', 'Relay B: calls relay-c.', 'orch/relay-c'));
    await publish(relay('relay-a', 'Relay A: calls relay-b.', 'orch/relay-b'));
    await publish(relay('prober', 'Prober: calls the hidden agent.', 'orch/hidden'));
    // Each relay's first turn calls its dependency through the platform; its second submits what it got.
    fake.setResponder((call) => {
      const done = (call.toolResults ?? []).length > 0;
      const system = call.system ?? '';
      if (done)
        return use('submit_result', { got: String(call.toolResults?.at(-1)?.content ?? '').slice(0, 500) });
      if (system.includes('Relay A'))
        return use('bash', { command: callWithServiceKey('/orch/relay-b/v1/run') });
      if (system.includes('Relay B'))
        return use('bash', { command: callWithServiceKey('/orch/relay-c/v1/run') });
      if (system.includes('Relay C'))
        return use('bash', { command: callWithServiceKey('/orch/leaf/v1/run') });
      if (system.includes('Prober'))
        return use('bash', { command: callWithServiceKey('/orch/hidden/v1/run') });
      return { text: 'unexpected' };
    });
  });
  after(async () => {
    await p.close();
    await fake.close();
  });

  it('stops a chain (A calls B calls C calls the leaf) at the hop limit: at most max_hops + 1 invocations', async (t) => {
    const day = utcDay(p.clock.now());
    const before = Number((await p.deps.store.get(dailyCounterKeys.sandboxRuns(owner.id, day)))?.calls ?? 0);
    const res = await p.request<{ data: { got: string } }>('POST', '/orch/relay-a/v1/run', {
      key: owner.key,
      body: {},
    });
    assert.equal(res.status, 200, res.text);
    const records = (await queryAll(p.deps.store, { pk: callRecordKeys.callerPk(owner.id) })).map(
      fromCallRecordItem,
    );
    const chain = records.filter((r) => r.agent.startsWith('relay-') || r.agent === 'leaf');
    const succeeded = chain.filter((r) => r.status === 'success');
    const refused = chain.filter((r) => r.error_code === 'FORBIDDEN');
    t.diagnostic(
      `max_hops 2: ${succeeded.length} invocations ran (A, B, C), ${refused.length} refused at the hop limit`,
    );
    assert.deepEqual(succeeded.map((r) => r.agent).sort(), ['relay-a', 'relay-b', 'relay-c']);
    assert.deepEqual(
      refused.map((r) => r.agent),
      ['leaf'],
      'the fourth hop was refused',
    );
    // The innermost C saw the refusal; each level passed its child's answer up.
    assert.match(res.body.data.got, /HTTP 200/);
    const after = Number((await p.deps.store.get(dailyCounterKeys.sandboxRuns(owner.id, day)))?.calls ?? 0);
    assert.equal(after - before, 1, 'only the top-level call counts against the daily quota');
  });

  it('honours a smaller X-Platform-Max-Hops from the caller', async () => {
    const seen = new Set(
      (await queryAll(p.deps.store, { pk: callRecordKeys.callerPk(owner.id) })).map((i) =>
        String(i.request_id),
      ),
    );
    const res = await p.request('POST', '/orch/relay-a/v1/run', {
      key: owner.key,
      body: {},
      headers: { 'x-platform-max-hops': '1' },
    });
    assert.equal(res.status, 200, res.text);
    const records = (await queryAll(p.deps.store, { pk: callRecordKeys.callerPk(owner.id) })).map(
      fromCallRecordItem,
    );
    const fresh = records.filter(
      (r) => !seen.has(r.request_id) && r.agent.startsWith('relay-') && r.status === 'success',
    );
    assert.equal(fresh.length, 2, 'A and B ran; B could not call further');
  });

  it('refuses agents that are not callable as dependencies, and keeps the service key from the model', async () => {
    const res = await p.request<{ data: { got: string } }>('POST', '/orch/prober/v1/run', {
      key: owner.key,
      body: {},
    });
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.data.got, /HTTP 403/);
    assert.match(res.body.data.got, /not callable as a dependency/);
    const issued = fake.calls.flatMap((c) => (c.toolResults ?? []).map((r) => String(r.content))).join('\n');
    assert.ok(!/ah[kr]_[A-Za-z0-9_-]{43}/.test(issued), 'the service key never reached the model');
  });

  it('a service key carries its context, fails once revoked or expired, and bounds sub-calls by its deadline and mode', async () => {
    const { issueServiceKey } = await import('../../functions/core/calls/service-keys.ts');
    const { authenticate } = await import('../../functions/core/api-keys/api-keys.ts');
    const now = p.clock.now().getTime();
    const context = {
      run_id: 'req_test',
      orchestrator: 'orch/relay-a/v1',
      dependencies: ['orch/leaf/v1', 'orch/plain-loop/v1'],
      hops_remaining: 1,
      deadline_ms: now + 60_000,
      budget: 50,
      strict: false,
    };
    const issued = await issueServiceKey(p.deps, owner.id, context);
    const asRun = { acceptRunCredential: true };
    const auth = await authenticate(p.deps, `Bearer ${issued.key}`, asRun);
    assert.deepEqual(auth.service, context);
    await issued.revoke();
    await assert.rejects(authenticate(p.deps, `Bearer ${issued.key}`, asRun), /Invalid or expired/);

    const expiring = await issueServiceKey(p.deps, owner.id, { ...context, deadline_ms: now + 1_000 });
    p.clock.advance(2 * 60_000);
    await assert.rejects(
      authenticate(p.deps, `Bearer ${expiring.key}`, asRun),
      /Invalid or expired/,
      'expired with its run',
    );

    const late = await issueServiceKey(p.deps, owner.id, {
      ...context,
      deadline_ms: p.clock.now().getTime() + 10,
    });
    const timedOut = await p.request('POST', '/orch/leaf/v1/run', { key: late.key, body: {} });
    assert.equal(
      timedOut.status,
      504,
      'a sub-call that would exceed the remaining deadline fails before it starts',
    );
    await late.revoke();

    // A strict parent forces strict mode downstream: an ordinary loop agent loses bash.
    const plain = await p.request('POST', '/agents?allow_no_secrets=true', {
      key: owner.key,
      body: {
        name: 'plain-loop',
        type: 'agent',
        description: 'Plain loop.',
        supported_providers: ['anthropic'],
      },
    });
    assert.equal(plain.status, 201, plain.text);
    const strict = await issueServiceKey(p.deps, owner.id, {
      ...context,
      deadline_ms: p.clock.now().getTime() + 60_000,
      strict: true,
    });
    const offered: string[][] = [];
    fake.setResponder((call) => {
      offered.push(call.tools ?? []);
      return use('submit_result', { ok: true });
    });
    const res = await p.request('POST', '/orch/plain-loop/v1/run', { key: strict.key, body: {} });
    assert.equal(res.status, 200, res.text);
    assert.ok(
      offered.length > 0 && !offered[0]?.includes('bash'),
      `tools offered: ${offered[0]?.join(', ')}`,
    );
    await strict.revoke();
  });

  it('calls a dependency through its matching custom tool on the platform side; strict mode refuses submit_result before it', async () => {
    const res0 = await p.request('POST', '/agents?allow_no_secrets=true', {
      key: owner.key,
      body: {
        name: 'strict-a',
        type: 'agent',
        description: 'Strict A: must call the leaf.',
        supported_providers: ['anthropic'],
        required_secrets: [],
        custom_tools: [
          {
            name: 'call_leaf',
            description: 'calls orch/leaf',
            command: 'call orch/leaf',
          },
        ],
        manifest: {
          manifest_version: 1,
          dependencies: [{ id: 'orch/leaf', version: 'v1' }],
          max_hops: 1,
          timeout_ms: 60_000,
        },
      },
    });
    assert.equal(res0.status, 201, res0.text);
    const seen: string[] = [];
    fake.setResponder((call) => {
      const last = String(call.toolResults?.at(-1)?.content ?? '');
      seen.push(last);
      if (!call.toolResults?.length) return use('submit_result', { early: true });
      if (/Strict orchestration mode/.test(last)) return use('call_leaf', {});
      return use('submit_result', { leaf: last.slice(0, 500) });
    });
    const res = await p.request<{ data: { leaf?: string; early?: boolean } }>(
      'POST',
      '/orch/strict-a/v1/run',
      {
        key: owner.key,
        body: {},
      },
    );
    assert.equal(res.status, 200, res.text);
    assert.ok(
      seen.some((m) => /call at least one dependency before submit_result/.test(m)),
      'the early submit was refused',
    );
    assert.equal(res.body.data.early, undefined);
    // The matching custom tool is the platform's call of orch/leaf: the model got the leaf's envelope.
    assert.deepEqual(JSON.parse(String(res.body.data.leaf)), { data: {}, warnings: [] });
    const records = (await queryAll(p.deps.store, { pk: callRecordKeys.callerPk(owner.id) })).map(
      fromCallRecordItem,
    );
    assert.ok(
      records.some((r) => r.agent === 'leaf' && r.status === 'success'),
      'the sub-call is recorded',
    );
  });

  it('logs a dependency call that failed as an error, as its step and span say it', async () => {
    for (const body of [
      {
        name: 'broken-leaf',
        type: 'tool',
        description: 'broken leaf',
        supported_providers: ['any'],
        runtime: { command: 'exit 1' },
      },
      relay('breaker', 'Breaker: calls the broken leaf.', 'orch/broken-leaf'),
    ]) {
      const res = await p.request('POST', '/agents?allow_no_secrets=true', { key: owner.key, body });
      assert.equal(res.status, 201, res.text);
    }
    fake.setResponder((call) =>
      (call.toolResults ?? []).length > 0 ? use('submit_result', { done: true }) : use('call_dep', {}),
    );
    const res = await p.request<{ metadata: { request_id: string } }>('POST', '/orch/breaker/v1/run', {
      key: owner.key,
      body: {},
    });
    assert.equal(res.status, 200, res.text);
    const list = await p.request<{ agents: { id: string; name: string }[] }>('GET', '/agents', {
      key: owner.key,
    });
    const id = list.body.agents.find((a) => a.name === 'breaker')?.id;
    const logs = await p.request<{ logs: { level: string; message: string; request_id: string }[] }>(
      'GET',
      `/agents/${id}/logs`,
      { key: owner.key },
    );
    const line = logs.body.logs.find(
      (l) => l.request_id === res.body.metadata.request_id && / failed with /.test(l.message),
    );
    assert.match(line?.message ?? '', /^call_dep → orch\/broken-leaf@v1 failed with [A-Z_]+$/);
    assert.equal(line?.level, 'error');
  });

  it('cancels a run in the middle of its sub-agent call: the dependency’s command is killed and its call recorded as its caller gone', async () => {
    for (const body of [
      {
        name: 'slow-leaf',
        type: 'tool',
        description: 'slow leaf',
        supported_providers: ['any'],
        runtime: { command: 'sleep 41' },
      },
      {
        name: 'waiter',
        type: 'agent',
        description: 'Waiter: calls the slow leaf.',
        supported_providers: ['anthropic'],
        required_secrets: [],
        custom_tools: [
          { name: 'call_slow', description: 'calls orch/slow-leaf', command: 'call orch/slow-leaf' },
        ],
        manifest: {
          manifest_version: 1,
          dependencies: [{ id: 'orch/slow-leaf', version: 'v1' }],
          max_hops: 1,
          timeout_ms: 60_000,
          orchestration_mode: 'flexible',
        },
      },
    ]) {
      const res = await p.request('POST', '/agents?allow_no_secrets=true', { key: owner.key, body });
      assert.equal(res.status, 201, res.text);
    }
    fake.setResponder((call) =>
      call.toolResults?.length ? use('submit_result', { late: true }) : use('call_slow', {}),
    );
    const started = await p.request<{ run_id: string }>('POST', '/orch/waiter/v1/run', {
      key: owner.key,
      body: {},
      headers: { prefer: 'respond-async' },
    });
    assert.equal(started.status, 202, started.text);
    await waitFor('the dependency’s command to run', async () =>
      (await runningCommands('sleep 41')) > 0 ? true : undefined,
    );
    const cancelled = await p.request<{ status: string }>('POST', `/runs/${started.body.run_id}/cancel`, {
      key: owner.key,
    });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.status, 'cancelled');
    await waitFor(
      'the dependency’s command to be gone',
      async () => ((await runningCommands('sleep 41')) === 0 ? true : undefined),
      10_000,
    );
    const leaf = await waitFor('the dependency’s call record', async () => {
      const records = (await queryAll(p.deps.store, { pk: callRecordKeys.callerPk(owner.id) })).map(
        fromCallRecordItem,
      );
      return records.find((r) => r.agent === 'slow-leaf');
    });
    assert.equal(leaf.status, 'timeout', 'the sub-call ended as its caller gone');
  });
});
