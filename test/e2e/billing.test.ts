import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEPLOYMENTS, type Deployment, startDeployment } from '../helpers/deployment.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { type FakeStripe, startFakeStripe } from '../helpers/fake-stripe.ts';
import { errorOf } from '../helpers/platform.ts';

/**
 * Credits and paid agents over HTTP against both deployments, with Stripe as AWS deploys it (the
 * local platform set to Stripe too): a Checkout Session at a loopback Stripe, a signed
 * checkout.session.completed webhook landing the credits once, a paid agent answering 402 without
 * them and charging its price with them, and a refund when the model fails.
 */

type Checkout = { session_id: string; checkout_url: string };
type Balance = { balance_credits: number };

for (const kind of DEPLOYMENTS) {
  describe(`billing: Stripe top-ups and paid agents (${kind} deployment)`, () => {
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
  });
}
