import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateApiKey } from '../../functions/core/api-keys/api-key-secret.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { runCli, startPlatformProcess } from '../helpers/process.ts';
import { buyCredits, processApi } from '../helpers/process-api.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * A run outlives the process that ran it (docs/runs.md, "Carried on"): the platform is killed with
 * SIGKILL while a paid managed loop waits for its second model answer, after its first turn ran a
 * sandboxed command, and is started again on the same data dir. The run goes on from its steps:
 * its first model request is not sent again, its command is not run again (the next request
 * carries the very output the first process got, a nanosecond clock and a random number), it is
 * charged once and recorded once, and its events are not written twice.
 */
describe('a run carried on after the platform was killed', () => {
  let fake: FakeLlmProviders;
  let dataDir: string;
  before(async () => {
    fake = await startFakeLlm();
    dataDir = await mkdtemp(join(tmpdir(), 'agenthost-run-carried-on-'));
  });
  after(async () => {
    await fake.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('resumes without a second model request, command or charge, and ends as the plain call would', {
    timeout: 90_000,
  }, async (t) => {
    const ownerKey = generateApiKey();
    const env = {
      PLATFORM_DATA_DIR: dataDir,
      PLATFORM_BOOTSTRAP_API_KEY: ownerKey,
      PLATFORM_BOOTSTRAP_TIER: 'pro',
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
    };
    let platform = await startPlatformProcess(env);
    t.after(() => platform.stop('SIGKILL'));
    const api = processApi(() => platform.url);
    // A paid public loop of another account, the owner its buyer.
    const created = await runCli(['accounts', 'create', '--org', 'lab', '--tier', 'pro', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    const sellerKey = JSON.parse(created.stdout).api_key as string;
    const published = await api('POST', '/agents?allow_no_secrets=true', sellerKey, {
      name: 'researcher',
      type: 'agent',
      description: 'Researches for a while.',
      supported_providers: ['anthropic'],
      prompt_template: 'Research {{topic}}.',
      is_public: true,
      price_credits: 5,
    });
    assert.equal(published.status, 201, JSON.stringify(published.body));
    await buyCredits(api, ownerKey, 500);
    const balance = async () =>
      (await api('GET', '/billing/balance', ownerKey)).body.balance_credits as number;

    // Turn 1 runs a command whose output can never come out the same twice; turn 2 is slow.
    fake.enqueue({
      toolCalls: [{ name: 'bash', input: { command: 'date +%s%N; od -An -N8 -tx8 /dev/urandom' } }],
    });
    fake.setResponder(() => ({ text: 'too late', delayMs: 120_000 }));
    const start = await api(
      'POST',
      '/lab/researcher/v1/run',
      ownerKey,
      { topic: 'tides' },
      {
        prefer: 'respond-async',
      },
    );
    assert.equal(start.status, 202, JSON.stringify(start.body));
    const runId = start.body.run_id as string;
    await waitFor('the second model request', () => (fake.calls.length >= 2 ? true : undefined));
    const [firstOutput] = fake.calls[1]?.toolResults ?? [];
    assert.ok(firstOutput && !firstOutput.isError, JSON.stringify(fake.calls[1]?.toolResults));
    assert.equal(await balance(), 495, 'charged once the run was admitted');
    await platform.stop('SIGKILL');

    // Started again: the run goes on from its second model request.
    fake.setResponder(() => ({
      toolCalls: [{ name: 'submit_result', input: { answer: 'high tide at noon' } }],
    }));
    platform = await startPlatformProcess(env);
    assert.match(platform.stdout(), /Runs: 1 carried on/);
    const ended = await waitFor(
      'the run to end',
      async () => {
        const run = await api('GET', `/runs/${runId}`, ownerKey);
        return run.body.status === 'running' ? undefined : run.body;
      },
      30_000,
    );
    assert.equal(ended.status, 'succeeded', JSON.stringify(ended));
    assert.deepEqual(ended.result.body.data, { answer: 'high tide at noon' });

    // Three model requests in all: the first was not sent again, and the command's output the
    // third carries is the one the first process got: the command did not run again.
    assert.equal(fake.calls.length, 3, fake.calls.map((c) => c.prompt).join(' | '));
    const resent = fake.calls[2]?.toolResults.find((r) => r.toolUseId === firstOutput.toolUseId);
    assert.equal(resent?.content, firstOutput.content);

    // Charged once, recorded once, as a success.
    assert.equal(await balance(), 495);
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
    assert.deepEqual(steps, ['bash', 'submit_result'], JSON.stringify(events));
    assert.deepEqual(
      events.map((e) => e.id),
      events.map((_, i) => i + 1),
    );

    // A restart after it ended carries nothing on.
    await platform.stop();
    platform = await startPlatformProcess(env);
    assert.doesNotMatch(platform.stdout(), /carried on/);
    assert.equal(fake.calls.length, 3);
    await platform.stop();
  });
});
