import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { type Deployment, startDeployment } from '../helpers/deployment.ts';
import { eachDeployment } from '../helpers/each-deployment.ts';
import { readEventStream } from '../helpers/event-stream.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { type FakeStripe, startFakeStripe } from '../helpers/fake-stripe.ts';
import { errorOf } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * Credits and paid agents over HTTP against both deployments, with Stripe as AWS deploys it (the
 * local platform set to Stripe too): a Checkout Session at a loopback Stripe, a signed
 * checkout.session.completed webhook landing the credits once, a paid agent answering 402 without
 * them and charging its price with them, and a refund when the model fails.
 */

type Checkout = { session_id: string; checkout_url: string };
type Balance = { balance_credits: number };

eachDeployment('billing: Stripe top-ups and paid agents', {}, (kind) => {
  let d: Deployment;
  let stripe: FakeStripe;
  let fake: FakeLlmProviders;

  before(async () => {
    stripe = await startFakeStripe();
    fake = await startFakeLlm();
    d = await startDeployment(kind, {
      PLATFORM_PAYMENTS: 'stripe',
      STRIPE_SECRET_KEY: stripe.secretKey,
      STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
      STRIPE_API_BASE: stripe.apiBase,
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
    });
    const published = await d.request('POST', '/agents', {
      body: {
        name: 'oracle',
        description: 'Paid answers.',
        supported_providers: ['anthropic'],
        prompt_template: 'Answer',
        is_public: true,
        price_credits: 5,
      },
    });
    assert.equal(published.status, 201, published.text);
  });
  after(async () => {
    await d?.close();
    await stripe?.close();
    await fake?.close();
  });

  it('tops up through Stripe once, charges a paid agent’s price, refunds a failed call', async () => {
    const buyer = await d.createAccount(`buyer-${kind}`, 'pro');
    const balance = async () =>
      (await d.request<Balance>('GET', '/billing/balance', { key: buyer.key })).body.balance_credits;

    const poor = await d.request('POST', '/local/oracle/v1/run', { key: buyer.key, body: {} });
    assert.equal(poor.status, 402, poor.text);
    assert.equal(errorOf(poor).code, 'INSUFFICIENT_CREDITS');
    assert.equal(fake.calls.length, 0, 'nothing ran');

    const co = await d.request<Checkout>('POST', '/billing/checkout', {
      key: buyer.key,
      body: { credits: 500 },
    });
    assert.equal(co.status, 201, co.text);
    const sent = stripe.seen.at(-1);
    assert.equal(sent?.path, '/v1/checkout/sessions');
    assert.equal(sent?.auth, `Bearer ${stripe.secretKey}`);
    assert.equal(sent?.form.get('client_reference_id'), buyer.accountId);

    const post = (payload: string, signature: string) =>
      d.request<{ landed: boolean; duplicate: boolean }>('POST', '/billing/webhook', {
        key: null,
        rawBody: payload,
        headers: { 'content-type': 'application/json', 'stripe-signature': signature },
      });
    const event = stripe.completedEvent(`evt_${kind}_1`, co.body.session_id);
    const forged = await post(event, stripe.signed(event, 'whsec_wrong'));
    assert.equal(forged.status, 400);
    assert.equal(await balance(), 0);
    const landed = await post(event, stripe.signed(event));
    assert.equal(landed.status, 200, landed.text);
    assert.equal(landed.body.landed, true);
    const replay = await post(event, stripe.signed(event));
    assert.deepEqual([replay.body.duplicate, replay.body.landed], [true, false]);
    assert.equal(await balance(), 500);

    fake.enqueue({ text: 'paid answer' });
    const ok = await d.request('POST', '/local/oracle/v1/run', { key: buyer.key, body: {} });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(await balance(), 495);

    fake.setResponder(() => ({ status: 500 }));
    const failed = await d.request('POST', '/local/oracle/v1/run', { key: buyer.key, body: {} });
    assert.equal(failed.status, 502, failed.text);
    assert.equal(await balance(), 495, 'the failed call is refunded');
    fake.setResponder(undefined);

    const list = await d.request<{ transactions: { type: string; amount: number }[] }>(
      'GET',
      '/billing/transactions',
      { key: buyer.key },
    );
    assert.deepEqual(
      list.body.transactions.map((t) => [t.type, t.amount]),
      [
        ['refund', 5],
        ['charge', -5],
        ['charge', -5],
        ['topup', 500],
      ],
    );
  });

  it('charges a streamed paid call whose caller hangs up after the first delta; refunds one that left before any', async () => {
    // From the caller's side: on the emulated deployment the client going away
    // reaches the calls Lambda as API Gateway closing its response stream.
    const buyer = await d.createAccount(`streamer-${kind}`, 'pro');
    const balance = async () =>
      (await d.request<Balance>('GET', '/billing/balance', { key: buyer.key })).body.balance_credits;
    const co = await d.request<Checkout>('POST', '/billing/checkout', {
      key: buyer.key,
      body: { credits: 500 },
    });
    assert.equal(co.status, 201, co.text);
    const event = stripe.completedEvent(`evt_${kind}_stream`, co.body.session_id);
    const landed = await d.request('POST', '/billing/webhook', {
      key: null,
      rawBody: event,
      headers: { 'content-type': 'application/json', 'stripe-signature': stripe.signed(event) },
    });
    assert.equal(landed.status, 200, landed.text);
    assert.equal(await balance(), 500);
    const streamed = (signal?: AbortSignal) =>
      fetch(`${d.url}/local/oracle/v1/run`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${buyer.key}`,
          'content-type': 'application/json',
          accept: 'text/event-stream',
        },
        body: '{}',
        ...(signal ? { signal } : {}),
      });
    /** The call's record in the caller's usage logs, once written (after any refund). */
    const recordOf = (requestId: string) =>
      waitFor(`the record of ${requestId}`, async () => {
        const page = await d.request<{
          logs: { request_id: string; status: string; output_tokens: number }[];
        }>('GET', '/usage/logs', { key: buyer.key });
        return page.body.logs?.find((l) => l.request_id === requestId);
      });

    fake.enqueue({ text: 'one two three', chunks: ['one ', 'two ', 'three'], chunkDelayMs: 2_000 });
    const left = new AbortController();
    const early = await streamed(left.signal);
    assert.equal(early.status, 200, 'the stream opened: charged, running');
    left.abort();
    assert.equal((await recordOf(early.headers.get('x-request-id') as string)).status, 'timeout');
    assert.equal(await balance(), 500, 'left before any output: refunded');

    fake.enqueue({ text: 'one two three', chunks: ['one ', 'two ', 'three'], chunkDelayMs: 1_000 });
    const res = await streamed();
    const { events } = await readEventStream(res, Date.now(), (e) => e.event === 'delta');
    assert.equal(events.length, 1);
    const record = await recordOf(res.headers.get('x-request-id') as string);
    assert.equal(record.status, 'timeout');
    assert.ok(record.output_tokens > 0, `output tokens: ${record.output_tokens}`);
    assert.equal(await balance(), 495, 'left after the first delta: charged');
  });
});
