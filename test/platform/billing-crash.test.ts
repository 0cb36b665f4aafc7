import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateApiKey } from '../../functions/core/api-keys/api-key-secret.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { runCli, startPlatformProcess } from '../helpers/process.ts';
import { buyCredits, processApi } from '../helpers/process-api.ts';

/**
 * The platform as its own process, killed with SIGKILL in the middle of a paid call (after the
 * charge, while the model is answering), then started again on the same data dir.
 */
describe('billing across a crash: a killed paid call is refunded once, a completed one stays billed', () => {
  let fake: FakeLlmProviders;
  let dataDir: string;
  before(async () => {
    fake = await startFakeLlm();
    dataDir = await mkdtemp(join(tmpdir(), 'agenthost-billing-crash-'));
  });
  after(async () => {
    await fake.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('refunds the charge of the call in flight when the process died, exactly once, right at the restart', {
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
    // A failed assertion must not leave the platform (and this test) running.
    t.after(() => platform.stop('SIGKILL'));
    const api = processApi(() => platform.url);
    // An author with a paid agent (another account), the owner as the buyer.
    const created = await runCli(['accounts', 'create', '--org', 'seller', '--tier', 'pro', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    const sellerKey = JSON.parse(created.stdout).api_key as string;
    const published = await api('POST', '/agents', sellerKey, {
      name: 'slow-oracle',
      description: 'Paid and slow.',
      supported_providers: ['anthropic'],
      prompt_template: 'Answer',
      is_public: true,
      price_credits: 7,
    });
    assert.equal(published.status, 201, JSON.stringify(published.body));
    await buyCredits(api, ownerKey, 500);
    const balance = async () =>
      (await api('GET', '/billing/balance', ownerKey)).body.balance_credits as number;
    assert.equal(await balance(), 500);

    // A completed paid call: billed.
    fake.enqueue({ text: 'done' });
    const done = await api('POST', '/seller/slow-oracle/v1/run', ownerKey, {});
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(await balance(), 493);

    // A paid call in flight when the process is killed: charged, never answered.
    fake.setResponder(() => ({ text: 'too late', delayMs: 120_000 }));
    const deadline = String(Date.now() + 60_000);
    const inFlight = api(
      'POST',
      '/seller/slow-oracle/v1/run',
      ownerKey,
      {},
      { 'x-platform-deadline-ms': deadline },
    ).catch((err: Error) => ({ status: 0, body: { error: err.message } }));
    for (let i = 0; i < 200 && fake.calls.length < 2; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(fake.calls.length, 2, 'the second call reached the model: its charge is written');
    await platform.stop('SIGKILL');
    const lost = await inFlight;
    assert.equal(lost.status, 0, 'the caller got no answer');
    fake.setResponder(undefined);

    // Back up at once, a minute before the call's deadline: holding the data dir's lock, the new
    // platform knows the call died with the last one, and reconciliation at start-up refunds it.
    platform = await startPlatformProcess(env);
    const after1 = await balance();
    t.diagnostic(`balance: 500 → 493 (billed call) → charged 7 more, killed → ${after1} after restart`);
    assert.equal(after1, 493, 'the unfinished call refunded; the completed one stays billed');
    // The caller's usage logs show the killed call, recorded as interrupted and not billed.
    const logs = (await api('GET', '/usage/logs?limit=10', ownerKey)).body.logs as {
      status: string;
      error_code: string | null;
      credits?: number;
    }[];
    const interrupted = logs.filter((l) => l.error_code === 'INTERRUPTED');
    assert.equal(interrupted.length, 1, JSON.stringify(logs));
    assert.equal(interrupted[0]?.status, 'error');
    await platform.stop();
    // A second restart refunds nothing more.
    platform = await startPlatformProcess(env);
    assert.equal(await balance(), 493);
    const tx = await api('GET', '/billing/transactions', ownerKey);
    assert.deepEqual(
      (tx.body.transactions as { type: string; amount: number }[]).map((e) => [e.type, e.amount]),
      [
        ['refund', 7],
        ['charge', -7],
        ['charge', -7],
        ['topup', 500],
      ],
    );
    await platform.stop();
  });
});
