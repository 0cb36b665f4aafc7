import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { generateApiKey } from '../../functions/core/api-keys/api-key-secret.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { runCli, startPlatformProcess } from '../helpers/process.ts';
import { buyCredits, type ProcessApi, processApi } from '../helpers/process-api.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * A run outlives the process that ran it (docs/runs.md, "Carried on"): the platform is killed with
 * SIGKILL while a managed loop waits for a model answer, after its first turn ran a tool, and is
 * started again on the same data dir. The run goes on from its steps: its first model request is
 * not sent again, its command is not run again (the next request carries the very output the first
 * process got, a nanosecond clock and a random number), the files it wrote are there, it is
 * charged once and recorded once, its events are not written twice, and an orchestrator's
 * sub-calls keep to the budget the first process had spent from.
 */

/**
 * A platform process on a data dir of its own, with a second account (`lab`, a seller), the owner
 * holding 500 credits; `restart` kills it (or stops it) and starts it again on the same data dir.
 */
async function labPlatform(t: TestContext, fake: FakeLlmProviders) {
  const ownerKey = generateApiKey();
  const dataDir = await mkdtemp(join(tmpdir(), 'agenthost-run-carried-on-'));
  const env = {
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_BOOTSTRAP_API_KEY: ownerKey,
    PLATFORM_BOOTSTRAP_TIER: 'pro',
    ANTHROPIC_API_KEY: 'sk-ant-test',
    ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
  };
  let platform = await startPlatformProcess(env);
  t.after(async () => {
    await platform.stop('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });
  const api: ProcessApi = processApi(() => platform.url);
  const created = await runCli(['accounts', 'create', '--org', 'lab', '--tier', 'pro', '--json'], env);
  assert.equal(created.code, 0, created.stderr);
  await buyCredits(api, ownerKey, 500);
  return {
    api,
    ownerKey,
    sellerKey: JSON.parse(created.stdout).api_key as string,
    /** Stops the platform with `signal` and starts it again: what it printed as it started. */
    async restart(signal: NodeJS.Signals) {
      await platform.stop(signal);
      platform = await startPlatformProcess(env);
      return platform.stdout();
    },
    balance: async () => (await api('GET', '/billing/balance', ownerKey)).body.balance_credits as number,
    /** Starts `ref` as a run of the owner's: its id. */
    async start(ref: string, input: unknown) {
      const started = await api('POST', `/${ref}/v1/run`, ownerKey, input, { prefer: 'respond-async' });
      assert.equal(started.status, 202, JSON.stringify(started.body));
      return started.body.run_id as string;
    },
    /** The run once it has ended. */
    ended: (runId: string) =>
      waitFor(
        'the run to end',
        async () => {
          const run = await api('GET', `/runs/${runId}`, ownerKey);
          return run.body.status === 'running' ? undefined : run.body;
        },
        30_000,
      ),
  };
}

describe('a run carried on after the platform was killed', () => {
  let fake: FakeLlmProviders;
  before(async () => {
    fake = await startFakeLlm();
  });
  after(() => fake.close());

  it('resumes without a second model request, command or charge, and ends as the plain call would', {
    timeout: 90_000,
  }, async (t) => {
    fake.reset();
    const lab = await labPlatform(t, fake);
    const { api, ownerKey } = lab;
    // A paid public loop of another account, the owner its buyer.
    const published = await api('POST', '/agents?allow_no_secrets=true', lab.sellerKey, {
      name: 'researcher',
      type: 'agent',
      description: 'Researches for a while.',
      supported_providers: ['anthropic'],
      prompt_template: 'Research {{topic}}.',
      is_public: true,
      price_credits: 5,
    });
    assert.equal(published.status, 201, JSON.stringify(published.body));

    // Turn 1 runs a command whose output can never come out the same twice; turn 2 is slow.
    const command =
      'mkdir -p notes; (date +%s%N; od -An -N8 -tx8 /dev/urandom) > notes/tides.txt; cat notes/tides.txt';
    fake.enqueue({ toolCalls: [{ name: 'bash', input: { command } }] });
    fake.setResponder(() => ({ text: 'too late', delayMs: 120_000 }));
    const runId = await lab.start('lab/researcher', { topic: 'tides' });
    await waitFor('the second model request', () => (fake.calls.length >= 2 ? true : undefined));
    const [firstOutput] = fake.calls[1]?.toolResults ?? [];
    assert.ok(firstOutput && !firstOutput.isError, JSON.stringify(fake.calls[1]?.toolResults));
    assert.equal(await lab.balance(), 495, 'charged once the run was admitted');

    // Started again: the run goes on from its second model request, which reads back the file
    // the first process's command wrote, then submits.
    fake.setResponder(undefined);
    fake.enqueue(
      { toolCalls: [{ name: 'bash', input: { command: 'cat notes/tides.txt' } }] },
      { toolCalls: [{ name: 'submit_result', input: { answer: 'high tide at noon' } }] },
    );
    assert.match(await lab.restart('SIGKILL'), /Runs: 1 carried on/);
    const ended = await lab.ended(runId);
    assert.equal(ended.status, 'succeeded', JSON.stringify(ended));
    assert.deepEqual(ended.result.body.data, { answer: 'high tide at noon' });

    // Four model requests in all: the first was not sent again, and the command's output the
    // third carries is the one the first process got: the command did not run again. The file it
    // wrote is in the new sandbox: the new command read back the same output.
    assert.equal(fake.calls.length, 4, fake.calls.map((c) => c.prompt).join(' | '));
    const resent = fake.calls[2]?.toolResults.find((r) => r.toolUseId === firstOutput.toolUseId);
    assert.equal(resent?.content, firstOutput.content);
    const [readBack] = fake.calls[3]?.toolResults ?? [];
    assert.equal(readBack?.isError, false, JSON.stringify(readBack));
    assert.equal(readBack?.content, firstOutput.content);

    // Charged once, recorded once, as a success.
    assert.equal(await lab.balance(), 495);
    const logs = (await api('GET', '/usage/logs?limit=10', ownerKey)).body.logs as {
      request_id: string;
      status: string;
      error_code: string | null;
    }[];
    const own = logs.filter((l) => l.request_id === ended.request_id);
    assert.deepEqual(
      own.map((l) => [l.status, l.error_code]),
      [['success', null]],
      JSON.stringify(logs),
    );
    // Each tool call's step logged once, in the order they ran, numbered on across the restart.
    const events = (await api('GET', `/runs/${runId}/events`, ownerKey)).body.events as {
      id: number;
      event: string;
      data: { name?: string };
    }[];
    const steps = events.filter((e) => e.event === 'step').map((e) => e.data.name);
    assert.deepEqual(steps, ['bash', 'bash', 'submit_result'], JSON.stringify(events));
    assert.deepEqual(
      events.map((e) => e.id),
      events.map((_, i) => i + 1),
    );

    // A restart after it ended carries nothing on.
    assert.doesNotMatch(await lab.restart('SIGTERM'), /carried on/);
    assert.equal(fake.calls.length, 4);
  });

  it('carries on an orchestrator with the budget its sub-calls spent: a finished sub-call is not made again, and the cap still holds', {
    timeout: 90_000,
  }, async (t) => {
    fake.reset();
    const lab = await labPlatform(t, fake);
    const { api, ownerKey } = lab;
    // A paid dependency of another account (2 credits a call), and the owner's orchestrator,
    // whose sub-calls may spend 3 credits in all: one call of the oracle, not two.
    const oracle = await api('POST', '/agents?allow_no_secrets=true', lab.sellerKey, {
      name: 'oracle',
      type: 'tool',
      description: 'Answers.',
      supported_providers: ['any'],
      runtime: { command: `echo '{"omen":"calm seas"}'` },
      is_public: true,
      price_credits: 2,
    });
    assert.equal(oracle.status, 201, JSON.stringify(oracle.body));
    const orchestrator = await api('POST', '/agents?allow_no_secrets=true', ownerKey, {
      name: 'augur',
      type: 'agent',
      description: 'Asks the oracle.',
      supported_providers: ['anthropic'],
      prompt_template: 'Ask.',
      custom_tools: [{ name: 'ask', description: 'asks the oracle', command: 'call lab/oracle' }],
      manifest: {
        manifest_version: 1,
        dependencies: [{ id: 'lab/oracle', version: 'v1' }],
        max_hops: 1,
        timeout_ms: 60_000,
        orchestration_mode: 'flexible',
        per_call_downstream_cap: 3,
      },
    });
    assert.equal(orchestrator.status, 201, JSON.stringify(orchestrator.body));

    fake.enqueue({ toolCalls: [{ name: 'ask', input: {} }] });
    fake.setResponder(() => ({ text: 'too late', delayMs: 120_000 }));
    const runId = await lab.start('local/augur', {});
    await waitFor('the second model request', () => (fake.calls.length >= 2 ? true : undefined));
    const [answered] = fake.calls[1]?.toolResults ?? [];
    assert.deepEqual(JSON.parse(String(answered?.content)), { data: { omen: 'calm seas' }, warnings: [] });
    assert.equal(await lab.balance(), 498, 'the oracle’s call charged');

    // Carried on: the model asks the oracle again, which the budget left (1 credit) refuses.
    fake.setResponder(undefined);
    fake.enqueue(
      { toolCalls: [{ name: 'ask', input: {} }] },
      { toolCalls: [{ name: 'submit_result', input: { omen: 'calm seas' } }] },
    );
    assert.match(await lab.restart('SIGKILL'), /Runs: 1 carried on/);
    const ended = await lab.ended(runId);
    assert.equal(ended.status, 'succeeded', JSON.stringify(ended));
    assert.equal(fake.calls.length, 4);
    const resent = fake.calls[2]?.toolResults.find((r) => r.toolUseId === answered?.toolUseId);
    assert.equal(resent?.content, answered?.content, 'the finished sub-call answered from its step');
    const [second] = fake.calls[3]?.toolResults ?? [];
    assert.equal(JSON.parse(String(second?.content)).error?.code, 'INSUFFICIENT_CREDITS', second?.content);
    assert.equal(await lab.balance(), 498, 'the oracle was paid once');
  });

  it('does not carry on a run whose key was deleted while it ran: the run acts for no credential its caller gave up', {
    timeout: 60_000,
  }, async (t) => {
    fake.reset();
    const lab = await labPlatform(t, fake);
    const { api, ownerKey } = lab;
    const published = await api('POST', '/agents', ownerKey, {
      name: 'slowpoke',
      description: 'Answers slowly.',
      supported_providers: ['anthropic'],
      prompt_template: 'Answer.',
    });
    assert.equal(published.status, 201, JSON.stringify(published.body));
    const made = await api('POST', '/api-keys', ownerKey, { name: 'runner' });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    fake.setResponder(() => ({ text: 'too late', delayMs: 120_000 }));
    const started = await api(
      'POST',
      '/local/slowpoke/v1/run',
      made.body.api_key,
      {},
      { prefer: 'respond-async' },
    );
    assert.equal(started.status, 202, JSON.stringify(started.body));
    await waitFor('the model request', () => (fake.calls.length >= 1 ? true : undefined));
    const deleted = await api('DELETE', `/api-keys/${made.body.id}`, ownerKey);
    assert.ok(deleted.status < 300, JSON.stringify(deleted.body));

    // Started again: the run is not made again with the deleted key (it is read as interrupted
    // once past its deadline, as before), and its model is not asked again.
    fake.setResponder(() => ({ text: 'made again' }));
    assert.doesNotMatch(await lab.restart('SIGKILL'), /carried on/);
    assert.equal(fake.calls.length, 1);
    const run = await api('GET', `/runs/${started.body.run_id}`, ownerKey);
    assert.equal(run.body.status, 'running', JSON.stringify(run.body));
  });
});
