import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { deliverAlert } from '../../functions/adapters/outbound/alert-delivery.ts';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { verifyWebhook } from '../../sdk/src/webhooks.ts';
import { type AlertReceiver, startAlertReceiver } from '../helpers/alert-receiver.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { documentProblems } from '../helpers/openapi-conformance.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { ECHO_AGENT, fastNotifier, startRunsPlatform } from '../helpers/schedules.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * A run's completion webhook (docs/runs.md, "Told when it ends"): named by X-Platform-Webhook,
 * checked before the 202, and POSTed once the run ended, signed with the account's signing secret,
 * to a receiver on loopback that checks the signature with the SDK's verifyWebhook. In memory (the
 * receiver is the only socket); the notifier is the local one with millisecond backoffs. From the
 * other side: the addresses refused in local and in AWS mode, and the secret shown once only.
 */

type RunDoc = {
  run_id: string;
  status: string;
  ended_at: string | null;
  webhook: { url: string } | null;
  result: { status: number; body: Record<string, unknown> } | null;
};

const SIGNATURE = 'x-platform-signature';

describe('run webhooks', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let receiver: AlertReceiver;
  let key: string;
  let secret: string;

  const start = (headers: Record<string, string>, as = key) =>
    p.request<RunDoc>('POST', '/hooks/echo/v1/run', {
      key: as,
      body: { text: 'hi' },
      headers: { prefer: 'respond-async', ...headers },
    });
  const runCount = async () =>
    (await p.request<{ runs: RunDoc[] }>('GET', '/runs', { key })).body.runs.length;
  const rotate = async (as = key) => {
    const made = await p.request<{ secret: string; created_at: string }>('POST', '/api-keys/webhook-secret', {
      key: as,
    });
    assert.equal(made.status, 201, made.text);
    return made.body.secret;
  };
  const verify = (s: string, header: unknown, raw: string) =>
    verifyWebhook(s, header as string, raw, 300, p.clock.now().getTime());

  before(async () => {
    fake = await startFakeLlm();
    p = await startRunsPlatform(fake, 'sqlite', {}, { inMemory: true });
    key = (await createAccount(p.deps, { org: 'hooks', tier: 'pro' })).api_key;
    const published = await p.request('POST', '/agents', {
      key,
      body: ECHO_AGENT,
    });
    assert.equal(published.status, 201, published.text);
    secret = await rotate();
  });
  after(async () => {
    await receiver?.close();
    await p?.close();
    await fake?.close();
  });
  beforeEach(async () => {
    fake.reset();
    await receiver?.close();
    receiver = await startAlertReceiver();
  });

  it('makes a signing secret shown once, whsec_ and 256 random bits, a new one each time', async () => {
    assert.match(secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    const made = await p.request('POST', '/api-keys/webhook-secret', { key });
    assert.deepEqual(documentProblems('/api-keys/webhook-secret', 'POST', 201, made.body), []);
    const next = made.body.secret as string;
    assert.notEqual(next, secret);
    secret = next;
  });

  it('POSTs the ended run’s document, exactly as GET answers it, signed, to a loopback receiver', async () => {
    const url = `${receiver.url}?token=receiver-token`;
    const started = await start({ 'x-platform-webhook': url });
    assert.equal(started.status, 202, started.text);
    // Shown without its query, which may hold the receiver's token.
    assert.deepEqual(started.body.webhook, { url: receiver.url });
    const [delivery] = await receiver.waitFor(1);
    assert.ok(delivery);
    assert.equal(delivery.path, '/hooks/alerts?token=receiver-token');
    assert.equal(delivery.headers['content-type'], 'application/json');
    assert.equal(delivery.headers['x-platform-run-id'], started.body.run_id);
    assert.match(String(delivery.headers[SIGNATURE]), /^t=[0-9]+,v1=[0-9a-f]{64}$/);
    assert.equal(await verify(secret, delivery.headers[SIGNATURE], delivery.raw), true);

    const run = await p.request<RunDoc & { metadata: unknown }>('GET', `/runs/${started.body.run_id}`, {
      key,
    });
    assert.equal(run.body.status, 'succeeded');
    // The document GET answers, without the answer's own metadata (its request's id).
    const { metadata: _answer, ...document } = run.body;
    assert.deepEqual(delivery.body, document);
    assert.deepEqual(documentProblems('/runs/{run_id}', 'GET', 200, run.body), []);
    // From the other side: another secret, another body, an old or a malformed signature fail.
    assert.equal(await verify(`${secret}x`, delivery.headers[SIGNATURE], delivery.raw), false);
    assert.equal(await verify(secret, delivery.headers[SIGNATURE], `${delivery.raw} `), false);
    const late = p.clock.now().getTime() + 301_000;
    assert.equal(
      await verifyWebhook(secret, String(delivery.headers[SIGNATURE]), delivery.raw, 300, late),
      false,
    );
    assert.equal(await verify(secret, 'v1=00', delivery.raw), false);
  });

  it('retries a receiver that failed, with backoff, until it takes the delivery', async () => {
    receiver.answer(503, 500);
    const started = await start({ 'x-platform-webhook': receiver.url });
    assert.equal(started.status, 202, started.text);
    const [delivery] = await receiver.waitFor(1);
    assert.equal(receiver.refused(), 2);
    assert.equal(await verify(secret, delivery?.headers[SIGNATURE], delivery?.raw ?? ''), true);
  });

  it('sends a failed run’s document too, its result the error envelope', async () => {
    fake.setResponder(async () => ({ status: 400 }));
    const started = await start({ 'x-platform-webhook': receiver.url });
    assert.equal(started.status, 202, started.text);
    const [delivery] = await receiver.waitFor(1);
    assert.ok(delivery);
    assert.equal(delivery.body.status, 'failed');
    assert.equal((delivery.body.result as { status: number }).status, 502);
  });

  it('refuses a webhook before anything runs: without respond-async, at a metadata address, not http(s), without a secret', async () => {
    const runs = await runCount();
    const plain = await p.request('POST', '/hooks/echo/v1/run', {
      key,
      body: { text: 'hi' },
      headers: { 'x-platform-webhook': receiver.url },
    });
    assert.equal(plain.status, 400, plain.text);
    assert.match(errorOf(plain).message, /x-platform-webhook.*respond-async/);
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/',
      'http://0.0.0.0:8080/',
      'ftp://example.com/hook',
      'not a url',
      `${receiver.url}?${'x'.repeat(2100)}`,
    ]) {
      const refused = await start({ 'x-platform-webhook': url });
      assert.equal(refused.status, 400, `${url}: ${refused.text}`);
      assert.equal(errorOf(refused).code, 'INVALID_INPUT');
    }
    const metadata = await start({ 'x-platform-webhook': 'http://169.254.169.254/' });
    assert.match(errorOf(metadata).message, /link-local/);
    const other = (await createAccount(p.deps, { org: 'nosecret', tier: 'pro' })).api_key;
    const unsigned = await p.request('POST', '/hooks/echo/v1/run', {
      key: other,
      body: { text: 'hi' },
      headers: { prefer: 'respond-async', 'x-platform-webhook': receiver.url },
    });
    assert.equal(unsigned.status, 400, unsigned.text);
    assert.match(errorOf(unsigned).message, /POST \/api-keys\/webhook-secret/);
    assert.equal(await runCount(), runs);
    assert.equal(receiver.received.length, 0);
  });

  it('never shows the secret again: not in a run, its events, an API listing or a log line', async () => {
    const started = await start({ 'x-platform-webhook': receiver.url });
    await receiver.waitFor(1);
    const id = started.body.run_id;
    await waitFor(
      'the run to end',
      async () => (await p.request<RunDoc>('GET', `/runs/${id}`, { key })).body.ended_at,
    );
    const seen = [
      (await p.request('GET', `/runs/${id}`, { key })).text,
      (await p.request('GET', '/runs', { key })).text,
      (await p.request('GET', `/runs/${id}/events`, { key })).text,
      (await p.request('GET', '/api-keys', { key })).text,
      receiver.received.map((r) => r.raw + JSON.stringify(r.headers)).join('\n'),
      p.logs.join('\n'),
    ].join('\n');
    assert.ok(seen.includes(id));
    assert.ok(!seen.includes(secret), 'the signing secret was shown');
    assert.ok(!seen.includes(secret.slice('whsec_'.length)), 'the signing secret was shown');
  });
});

describe('a delivery’s own attempts and headers', () => {
  it('sends its headers beside its JSON content type, and makes the attempts it asks, five at most', async () => {
    const receiver = await startAlertReceiver();
    try {
      const delivery = {
        url: receiver.url,
        payload: { a: 1 },
        label: 'test',
        headers: { 'X-Platform-Signature': 't=1,v1=ab', 'content-type': 'text/plain' },
      };
      const policy = { mode: 'local' as const, backoffMs: [1, 1] };
      receiver.answer(503, 503, 503, 503, 503);
      const failed = await deliverAlert({ ...delivery, attempts: 9 }, policy);
      assert.deepEqual([failed.delivered, failed.attempts, receiver.refused()], [false, 5, 5]);
      receiver.answer(503);
      const sent = await deliverAlert({ ...delivery, attempts: 2 }, policy);
      assert.deepEqual([sent.delivered, sent.attempts], [true, 2]);
      assert.equal(receiver.received[0]?.headers['x-platform-signature'], 't=1,v1=ab');
      assert.equal(receiver.received[0]?.headers['content-type'], 'application/json');
      assert.equal(receiver.received[0]?.raw, '{"a":1}');
    } finally {
      await receiver.close();
    }
  });
});

describe('run webhooks in AWS mode', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let receiver: AlertReceiver;

  before(async () => {
    fake = await startFakeLlm();
    // The local store, with the notifier AWS's deployment has: its outbound URL rules.
    p = await startTestPlatform(
      { OPENAI_API_KEY: 'sk-openai-test', OPENAI_BASE_URL: fake.baseUrls.openai },
      'sqlite',
      { notifier: fastNotifier('aws') },
      { inMemory: true },
    );
    receiver = await startAlertReceiver();
  });
  after(async () => {
    await receiver?.close();
    await p?.close();
    await fake?.close();
  });

  it('refuses a loopback, private or link-local webhook (400) and starts no run', async () => {
    const key = (await createAccount(p.deps, { org: 'awshooks', tier: 'pro' })).api_key;
    assert.equal((await p.request('POST', '/api-keys/webhook-secret', { key })).status, 201);
    const published = await p.request('POST', '/agents', {
      key,
      body: ECHO_AGENT,
    });
    assert.equal(published.status, 201, published.text);
    for (const [url, reason] of [
      [receiver.url, /scheme http is not allowed/],
      [receiver.url.replace('http:', 'https:'), /loopback/],
      ['https://10.1.2.3/hook', /private/],
      ['https://[fd00::1]/hook', /private/],
      ['https://169.254.169.254/hook', /link-local/],
    ] as const) {
      const refused = await p.request('POST', '/awshooks/echo/v1/run', {
        key,
        body: { text: 'hi' },
        headers: { prefer: 'respond-async', 'x-platform-webhook': url },
      });
      assert.equal(refused.status, 400, `${url}: ${refused.text}`);
      assert.match(errorOf(refused).message, reason);
    }
    assert.equal((await p.request<{ runs: unknown[] }>('GET', '/runs', { key })).body.runs.length, 0);
    assert.equal(receiver.received.length, 0);
  });
});
