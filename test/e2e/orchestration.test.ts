import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { type Deployment, startDeployment } from '../helpers/deployment.ts';
import { eachDeployment } from '../helpers/each-deployment.ts';
import {
  type FakeLlmProviders,
  type FakeLlmResponse,
  start as startFakeLlm,
} from '../helpers/fake-llm-providers.ts';
import { runEnded } from '../helpers/run-ended.ts';
import { runningCommands } from '../helpers/running-commands.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * Orchestration over HTTP against both deployments: managed loops that call their declared
 * dependencies through their matching custom tools (the platform makes the sub-call, the way that
 * works on ECS too), a chain stopped at its hop limit, and strict mode refusing submit_result
 * before a dependency was called.
 */

const use = (name: string, input: unknown): FakeLlmResponse => ({ toolCalls: [{ name, input }] });

/** A loop agent that calls `dependency` (org/name, v1) through its custom tool `call_dep`. */
const relay = (
  name: string,
  description: string,
  dependency: string,
  extra: Record<string, unknown> = {},
) => ({
  name,
  type: 'agent',
  description,
  supported_providers: ['anthropic'],
  custom_tools: [{ name: 'call_dep', description: `calls ${dependency}`, command: `call ${dependency}` }],
  manifest: {
    manifest_version: 1,
    dependencies: [{ id: dependency, version: 'v1' }],
    max_hops: 2,
    timeout_ms: 60_000,
    // Flexible: the innermost relay may submit the refusal it got (strict would insist on a call).
    orchestration_mode: 'flexible',
    ...extra,
  },
});

eachDeployment('orchestration: dependencies, hop limits and strict mode', {}, (kind) => {
  let d: Deployment;
  let fake: FakeLlmProviders;

  before(async () => {
    fake = await startFakeLlm();
    d = await startDeployment(kind, {
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
    });
    const publish = async (body: Record<string, unknown>) => {
      const res = await d.request('POST', '/agents?allow_no_secrets=true', { body });
      assert.equal(res.status, 201, res.text);
    };
    await publish({
      name: 'leaf',
      type: 'tool',
      description: 'leaf',
      supported_providers: ['any'],
      runtime: { command: 'echo \'{"leaf":true}\'' },
    });
    // A chain relay-a -> relay-b -> relay-c -> leaf with max_hops 2: the fourth hop is refused.
    await publish(relay('relay-c', 'Relay C: calls the leaf.', 'local/leaf'));
    await publish(relay('relay-b', 'Relay B: calls relay-c.', 'local/relay-c'));
    await publish(relay('relay-a', 'Relay A: calls relay-b.', 'local/relay-b'));
    await publish(
      relay('strict-a', 'Strict A: must call the leaf.', 'local/leaf', { orchestration_mode: 'strict' }),
    );
  });
  after(async () => {
    await d?.close();
    await fake?.close();
  });

  it('passes each dependency’s answer up a chain and refuses the hop past max_hops', async () => {
    // Each relay's first turn calls its dependency; its second submits what it got.
    fake.setResponder((call) => {
      const results = call.toolResults ?? [];
      if (results.length > 0) return use('submit_result', { got: String(results.at(-1)?.content ?? '') });
      return use('call_dep', {});
    });
    const res = await d.request<{ data: { got: string } }>('POST', '/local/relay-a/v1/run', { body: {} });
    assert.equal(res.status, 200, `${res.text}\n${d.output().slice(-3000)}`);
    // A got B's envelope, whose data holds C's, whose data holds the leaf's refusal.
    const b = JSON.parse(res.body.data.got) as { data: { got: string } };
    const c = JSON.parse(b.data.got) as { data: { got: string } };
    const leaf = JSON.parse(c.data.got) as { error?: { code: string } };
    assert.equal(leaf.error?.code, 'FORBIDDEN', `the fourth hop is refused: ${c.data.got}`);
  });

  it('cancels a run in the middle of its sub-agent call (emulated: in the run worker): the dependency’s command stops, the sub-call is recorded as its caller gone', async () => {
    // A command of this deployment's own, so that no other test's process counts.
    const command = `sleep ${kind === 'local' ? 79 : 83}`;
    for (const body of [
      {
        name: 'dozer',
        type: 'tool',
        description: 'Dozes.',
        supported_providers: ['any'],
        runtime: { command },
      },
      relay('waiter', 'Waiter: calls the dozer.', 'local/dozer'),
    ]) {
      const res = await d.request('POST', '/agents?allow_no_secrets=true', { body });
      assert.equal(res.status, 201, res.text);
    }
    fake.setResponder((call) =>
      call.toolResults?.length ? use('submit_result', { late: true }) : use('call_dep', {}),
    );
    const started = await d.request<{ run_id: string }>('POST', '/local/waiter/v1/run', {
      body: {},
      headers: { prefer: 'respond-async' },
    });
    assert.equal(started.status, 202, started.text);
    await waitFor('the dependency’s command to run', async () =>
      (await runningCommands(command)) > 0 ? true : undefined,
    );
    const cancel = await d.request('POST', `/runs/${started.body.run_id}/cancel`);
    assert.ok(cancel.status === 200 || cancel.status === 202, cancel.text);
    const ended = await runEnded(d.request, started.body.run_id);
    assert.equal(ended.status, 'cancelled', JSON.stringify(ended));
    await waitFor('the dependency’s command to be gone', async () =>
      (await runningCommands(command)) === 0 ? true : undefined,
    );
    const dozer = await waitFor('the sub-call’s record', async () => {
      const logs = await d.request<{
        logs: { agent: string; status: string; error_code: string | null }[];
      }>('GET', '/usage/logs?limit=20');
      return logs.body.logs.find((l) => l.agent === 'dozer');
    });
    assert.equal(dozer.status, 'timeout', `the sub-call ended as its caller gone: ${JSON.stringify(dozer)}`);
  });

  it('in strict mode refuses submit_result before a dependency was called, then passes the leaf’s answer', async () => {
    const seen: string[] = [];
    fake.setResponder((call) => {
      const last = String(call.toolResults?.at(-1)?.content ?? '');
      seen.push(last);
      if (!call.toolResults?.length) return use('submit_result', { early: true });
      if (/Strict orchestration mode/.test(last)) return use('call_dep', {});
      return use('submit_result', { leaf: last });
    });
    const res = await d.request<{ data: { leaf?: string; early?: boolean } }>(
      'POST',
      '/local/strict-a/v1/run',
      {
        body: {},
      },
    );
    assert.equal(res.status, 200, res.text);
    assert.ok(
      seen.some((m) => /call at least one dependency before submit_result/.test(m)),
      'the early submit was refused',
    );
    assert.equal(res.body.data.early, undefined);
    assert.deepEqual(JSON.parse(String(res.body.data.leaf)), { data: { leaf: true }, warnings: [] });
  });
});
