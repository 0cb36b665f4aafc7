import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { hashApiKey } from '../../functions/core/api-keys/api-key-secret.ts';
import { issueServiceKey, spendDownstreamBudget } from '../../functions/core/calls/service-keys.ts';
import { dailyCounterKeys, utcDay } from '../../functions/core/usage/daily-usage.ts';
import { readEventStream } from '../helpers/event-stream.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { type FakeStripe, startFakeStripe } from '../helpers/fake-stripe.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait-for.ts';

type Checkout = { session_id: string; checkout_url: string; credits: number; amount_cents: number };

describe('billing with local payments: checkout page, confirm, balance, transactions', () => {
  let p: TestPlatform;
  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
  });
  after(() => p.close());

  it('lands a top-up once through the local checkout page, and lists it', async () => {
    const a = await createAccount(p.deps, { org: 'payer', tier: 'pro' });
    const balance0 = await p.request<{ balance_credits: number }>('GET', '/billing/balance', {
      key: a.api_key,
    });
    assert.deepEqual(balance0.body.balance_credits, 0);
    const tooSmall = await p.request('POST', '/billing/checkout', { key: a.api_key, body: { credits: 10 } });
    assert.equal(tooSmall.status, 400);
    assert.deepEqual(errorOf(tooSmall).fields, ['body.credits']);
    const co = await p.request<Checkout>('POST', '/billing/checkout', {
      key: a.api_key,
      body: { credits: 1000 },
    });
    assert.equal(co.status, 201, co.text);
    assert.equal(co.body.amount_cents, 1000);
    const path = new URL(co.body.checkout_url).pathname;
    const page = await p.fetch(path);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await page.text(), /Top up 1,000 credits[\s\S]*Confirm payment/);
    const still = await p.request<{ balance_credits: number }>('GET', '/billing/balance', { key: a.api_key });
    assert.equal(still.body.balance_credits, 0, 'nothing lands before the payment is confirmed');
    const confirm = await p.request<{ landed: boolean; balance_credits: number }>('POST', `${path}/confirm`, {
      key: null,
    });
    assert.equal(confirm.status, 200, confirm.text);
    assert.deepEqual([confirm.body.landed, confirm.body.balance_credits], [true, 1000]);
    const again = await p.request<{ landed: boolean; balance_credits: number }>('POST', `${path}/confirm`, {
      key: null,
    });
    assert.deepEqual(
      [again.body.landed, again.body.balance_credits],
      [false, 1000],
      'a second confirm lands nothing',
    );
    for (const route of ['/billing/transactions', '/billing/history']) {
      const list = await p.request<{
        transactions: { type: string; amount: number; reference: string }[];
        total: number;
      }>('GET', `${route}?limit=10`, { key: a.api_key });
      assert.equal(list.status, 200);
      assert.equal(list.body.total, 1);
      assert.deepEqual(
        list.body.transactions.map((t) => [t.type, t.amount, t.reference]),
        [['topup', 1000, `checkout:${co.body.session_id}`]],
      );
    }
    assert.equal((await p.request('POST', '/billing/webhook', { key: null, rawBody: '{}' })).status, 400);
  });

  it('answers the page’s own form with the paid page and its way back to the dashboard, not JSON', async () => {
    const a = await createAccount(p.deps, { org: 'browser-payer', tier: 'pro' });
    const co = await p.request<Checkout>('POST', '/billing/checkout', {
      key: a.api_key,
      body: { credits: 700 },
    });
    const path = new URL(co.body.checkout_url).pathname;
    const open = await (await p.fetch(path)).text();
    assert.match(open, /href="\/#\/billing\/cancelled"/, 'a way back without paying');
    // What a browser sends for the page's <form method="post">: a form body (here empty).
    const posted = await p.fetch(`${path}/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: p.url },
      body: '',
    });
    assert.equal(posted.status, 200);
    assert.match(posted.headers.get('content-type') ?? '', /^text\/html/);
    const html = await posted.text();
    assert.match(
      html,
      /This checkout is <strong>paid<\/strong>[\s\S]*href="\/#\/billing\/paid">Back to agenthost/,
    );
    assert.doesNotMatch(html, /Confirm payment/);
    const balance = await p.request<{ balance_credits: number }>('GET', '/billing/balance', {
      key: a.api_key,
    });
    assert.equal(balance.body.balance_credits, 700);
    assert.equal(
      (await p.request('GET', '/billing/checkout/lcs_unknown_session_id_xx', { key: null })).status,
      404,
    );
  });
});

describe('billing with Stripe (the SDK against a loopback server speaking Stripe’s API)', () => {
  let p: TestPlatform;
  let fake: FakeStripe;

  before(async () => {
    fake = await startFakeStripe();
    p = await startTestPlatform(
      {
        PLATFORM_PAYMENTS: 'stripe',
        STRIPE_SECRET_KEY: fake.secretKey,
        STRIPE_WEBHOOK_SECRET: fake.webhookSecret,
        STRIPE_API_BASE: fake.apiBase,
      },
      'sqlite',
      {},
      { inMemory: true },
    );
  });
  after(async () => {
    await p.close();
    await fake.close();
  });

  it('creates a Checkout Session; only a signed completed event lands credits, once; replays and forgeries land nothing', async (t) => {
    const a = await createAccount(p.deps, { org: 'stripe-payer', tier: 'pro' });
    const co = await p.request<Checkout>('POST', '/billing/checkout', {
      key: a.api_key,
      body: { credits: 2500 },
    });
    assert.equal(co.status, 201, co.text);
    assert.equal(co.body.session_id, 'cs_test_1');
    assert.equal(co.body.checkout_url, 'https://checkout.stripe.com/c/pay/cs_test_1');
    const sent = fake.seen.find((s) => s.path === '/v1/checkout/sessions');
    assert.ok(sent);
    assert.equal(sent.auth, 'Bearer sk_test_platform');
    assert.equal(sent.form.get('mode'), 'payment');
    assert.equal(sent.form.get('line_items[0][price_data][unit_amount]'), '2500');
    assert.equal(sent.form.get('line_items[0][price_data][currency]'), 'usd');
    assert.equal(sent.form.get('metadata[account_id]'), a.account.id);
    assert.equal(sent.form.get('client_reference_id'), a.account.id);
    // The payer's browser comes back to the dashboard's billing page, not to a keyed API route.
    assert.match(sent.form.get('success_url') ?? '', /\/#\/billing\/paid$/);
    assert.match(sent.form.get('cancel_url') ?? '', /\/#\/billing\/cancelled$/);

    const event = (id: string, status = 'paid') => fake.completedEvent(id, 'cs_test_1', status);
    const signed = fake.signed;
    const post = (payload: string, signature: string | undefined) =>
      p.request<{ received: boolean; duplicate: boolean; landed: boolean }>('POST', '/billing/webhook', {
        key: null,
        rawBody: payload,
        headers: {
          'content-type': 'application/json',
          ...(signature ? { 'stripe-signature': signature } : {}),
        },
      });
    const balance = async () =>
      (await p.request<{ balance_credits: number }>('GET', '/billing/balance', { key: a.api_key })).body
        .balance_credits;

    const forged = await post(event('evt_forged'), signed(event('evt_forged'), 'whsec_wrong'));
    assert.equal(forged.status, 400);
    const tampered = await post(event('evt_1').replace('"paid"', '"paid" '), signed(event('evt_1')));
    assert.equal(tampered.status, 400);
    assert.equal((await post(event('evt_nosig'), undefined)).status, 400);
    assert.equal(await balance(), 0);

    const unpaid = await post(event('evt_0', 'unpaid'), signed(event('evt_0', 'unpaid')));
    assert.deepEqual(unpaid.body.landed, false);
    const ok = await post(event('evt_1'), signed(event('evt_1')));
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.landed, true);
    assert.equal(await balance(), 2500);
    const replay = await post(event('evt_1'), signed(event('evt_1')));
    assert.deepEqual([replay.body.duplicate, replay.body.landed], [true, false]);
    const resent = await post(event('evt_2'), signed(event('evt_2')));
    assert.deepEqual(
      [resent.body.duplicate, resent.body.landed],
      [false, false],
      'another event for a paid session lands nothing',
    );
    assert.equal(await balance(), 2500);
    t.diagnostic(
      'forged, tampered and unsigned: 400; replayed event: acknowledged, nothing landed; balance 2500 after one payment',
    );
  });

  it('lands the credits on Stripe’s retry of an event whose landing failed', async () => {
    const b = await createAccount(p.deps, { org: 'stripe-retry', tier: 'pro' });
    const co = await p.request<Checkout>('POST', '/billing/checkout', {
      key: b.api_key,
      body: { credits: 700 },
    });
    assert.equal(co.status, 201, co.text);
    const payload = fake.completedEvent('evt_retry', co.body.session_id, 'paid');
    const post = () =>
      p.request<{ duplicate: boolean; landed: boolean }>('POST', '/billing/webhook', {
        key: null,
        rawBody: payload,
        headers: { 'content-type': 'application/json', 'stripe-signature': fake.signed(payload) },
      });
    // The store fails the landing's transaction once, as a throttled or unreachable table does.
    const store = p.deps.store;
    const transactWrite = store.transactWrite.bind(store);
    store.transactWrite = async () => {
      store.transactWrite = transactWrite;
      throw new Error('the table is unreachable');
    };
    const failed = await post();
    assert.equal(failed.status, 500, 'Stripe retries an event answered with a 5xx');
    const retried = await post();
    assert.equal(retried.status, 200, retried.text);
    assert.deepEqual([retried.body.duplicate, retried.body.landed], [false, true]);
    const balance = await p.request<{ balance_credits: number }>('GET', '/billing/balance', {
      key: b.api_key,
    });
    assert.equal(balance.body.balance_credits, 700);
    const again = await post();
    assert.deepEqual([again.body.duplicate, again.body.landed], [true, false]);
  });
});

describe('paid agents: charge before the run, 402 without credits, refunds, earnings, limits', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let author: { key: string; ws: string };
  // On a socket: a streamed paid call the client hangs up on is recorded as a timeout there; in
  // memory (an aborted Request) it was recorded as a success.
  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform({
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
    });
    const a = await createAccount(p.deps, { org: 'seller', tier: 'pro' });
    author = { key: a.api_key, ws: a.workspace_id };
    const published = await p.request('POST', '/agents', {
      key: author.key,
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
    await p.close();
    await fake.close();
  });

  const topUp = async (key: string, credits: number) => {
    const co = await p.request<Checkout>('POST', '/billing/checkout', { key, body: { credits } });
    await p.request('POST', `${new URL(co.body.checkout_url).pathname}/confirm`, { key: null });
  };
  const balanceOf = async (key: string) =>
    (await p.request<{ balance_credits: number }>('GET', '/billing/balance', { key })).body.balance_credits;
  /** The account's ledger, newest first, as [type, amount]. */
  const transactionsOf = async (key: string) =>
    (
      await p.request<{ transactions: { type: string; amount: number }[] }>('GET', '/billing/transactions', {
        key,
      })
    ).body.transactions.map((t) => [t.type, t.amount]);

  it('answers 402 INSUFFICIENT_CREDITS and runs nothing without credits; charges the price once it can', async () => {
    const c = await createAccount(p.deps, { org: 'buyer', tier: 'pro' });
    fake.reset();
    const poor = await p.request('POST', '/seller/oracle/v1/run', { key: c.api_key, body: {} });
    assert.equal(poor.status, 402);
    assert.equal(errorOf(poor).code, 'INSUFFICIENT_CREDITS');
    assert.equal(fake.calls.length, 0, 'nothing ran');
    await topUp(c.api_key, 500);
    fake.enqueue({ text: 'paid answer' });
    const ok = await p.request('POST', '/seller/oracle/v1/run', { key: c.api_key, body: {} });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(await balanceOf(c.api_key), 495);
    // A failure on the platform's side is refunded.
    fake.enqueue({ status: 500 });
    const failed = await p.request('POST', '/seller/oracle/v1/run', { key: c.api_key, body: {} });
    assert.equal(failed.status, 502);
    assert.equal(await balanceOf(c.api_key), 495, 'LLM_ERROR refunded');
    assert.deepEqual(await transactionsOf(c.api_key), [
      ['refund', 5],
      ['charge', -5],
      ['charge', -5],
      ['topup', 500],
    ]);
    // The author sees the earnings (the refunded call excluded), and runs its own agent free.
    const usage = await p.request<{ earnings_credits: number }>(
      'GET',
      `/author-usage?workspace_id=${author.ws}`,
      {
        key: author.key,
      },
    );
    assert.equal(usage.status, 200, usage.text);
    assert.equal(usage.body.earnings_credits, 5);
    fake.enqueue({ text: 'own' });
    const own = await p.request('POST', '/seller/oracle/v1/run', { key: author.key, body: {} });
    assert.equal(own.status, 200);
    assert.equal(await balanceOf(author.key), 0);
  });

  it('a streamed paid call is charged once it sent any output, however it ends; refunded when it sent none', async () => {
    // From the caller's side: reading the text and hanging up before the result (or letting the
    // call fail after it) must not make a paid agent free (docs/billing.md, "The caller gone").
    const c = await createAccount(p.deps, { org: 'streambuyer', tier: 'pro' });
    await topUp(c.api_key, 500);
    fake.reset();
    const streamed = (signal?: AbortSignal) =>
      fetch(`${p.url}/seller/oracle/v1/run`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${c.api_key}`,
          'content-type': 'application/json',
          accept: 'text/event-stream',
        },
        body: '{}',
        ...(signal ? { signal } : {}),
      });
    type Logged = {
      request_id: string;
      status: string;
      error_code: string | null;
      input_tokens: number;
      output_tokens: number;
      total_tokens: number;
    };
    /** The call's record as the caller's usage logs show it, once written (after any refund). */
    const recordOf = (requestId: string) =>
      waitFor(`the record of ${requestId}`, async () => {
        const page = await p.request<{ logs: Logged[] }>('GET', '/usage/logs', { key: c.api_key });
        return page.body.logs?.find((l) => l.request_id === requestId);
      });

    fake.enqueue({ text: 'paid stream', chunks: ['paid ', 'stream'], chunkDelayMs: 20 });
    const ok = await readEventStream(await streamed(), Date.now());
    assert.equal(ok.events.at(-1)?.event, 'result');
    assert.equal(await balanceOf(c.api_key), 495, 'charged once');

    // No output sent: the model failed before its first piece, or the caller left before it.
    fake.enqueue({ text: 'a b', chunks: ['a ', 'b'], failAfterChunks: 0, usage: { inputTokens: 17 } });
    const failedEarlyRes = await streamed();
    const failedEarly = await readEventStream(failedEarlyRes, Date.now());
    assert.deepEqual(
      failedEarly.events.map((e) => e.event),
      ['error'],
    );
    assert.equal(await balanceOf(c.api_key), 495, 'a failure before any output is refunded');
    const failedEarlyRecord = await recordOf(failedEarlyRes.headers.get('x-request-id') as string);
    assert.deepEqual(
      [failedEarlyRecord.input_tokens, failedEarlyRecord.output_tokens],
      [17, 0],
      'the input tokens its stream reported (message_start) before it failed, no output',
    );
    fake.enqueue({ text: 'a b c', chunks: ['a ', 'b ', 'c'], chunkDelayMs: 1000 });
    const early = new AbortController();
    const leftEarly = await streamed(early.signal);
    assert.equal(leftEarly.status, 200, 'the stream opened: the call was charged and runs');
    early.abort();
    const earlyRecord = await recordOf(leftEarly.headers.get('x-request-id') as string);
    assert.equal(earlyRecord.status, 'timeout');
    assert.equal(await balanceOf(c.api_key), 495, 'a caller gone before any output is refunded');

    // The caller reads the first piece and hangs up: charged, with the tokens the provider billed.
    fake.enqueue({
      text: 'The answer is forty-two, as computed.',
      chunks: ['The answer ', 'is forty-two, ', 'as computed.'],
      chunkDelayMs: 300,
      usage: { inputTokens: 321 },
    });
    const res = await streamed();
    const requestId = res.headers.get('x-request-id') as string;
    const read = await readEventStream(res, Date.now(), (e) => e.event === 'delta');
    assert.deepEqual(
      read.events.map((e) => JSON.parse(e.data).text),
      ['The answer '],
    );
    const record = await recordOf(requestId);
    assert.deepEqual([record.status, record.error_code], ['timeout', 'TIMEOUT']);
    assert.equal(await balanceOf(c.api_key), 490, 'the hang-up after output is charged, not refunded');
    assert.equal(record.input_tokens, 321, 'the input tokens the provider reported as its stream began');
    assert.ok(record.output_tokens >= 1, `output tokens recorded: ${record.output_tokens}`);
    assert.equal(record.total_tokens, record.input_tokens + record.output_tokens);
    assert.equal(await fake.calls.at(-1)?.settled, 'disconnected', 'the model request was stopped');

    // Output sent, then the model failed: the caller has the agent's output, so it is charged too.
    fake.enqueue({ text: 'a b', chunks: ['a ', 'b'], chunkDelayMs: 20, failAfterChunks: 1 });
    const failed = await readEventStream(await streamed(), Date.now());
    assert.deepEqual(
      failed.events.map((e) => e.event),
      ['delta', 'error'],
    );
    assert.equal(await balanceOf(c.api_key), 485, 'a failure after output is charged');
    assert.deepEqual(await transactionsOf(c.api_key), [
      ['charge', -5],
      ['charge', -5],
      ['refund', 5],
      ['charge', -5],
      ['refund', 5],
      ['charge', -5],
      ['charge', -5],
      ['topup', 500],
    ]);
  });

  it('a paid managed loop that streamed its words and then failed (no submit_result) is charged, with its tokens', async () => {
    // The caller could ask the model to answer in words instead of submitting: the words go out as
    // a delta, then LLM_ERROR. The caller has the answer, so the charge stands.
    const published = await p.request('POST', '/agents?allow_no_secrets=true', {
      key: author.key,
      body: {
        name: 'loopteller',
        type: 'agent',
        description: 'Paid loop.',
        supported_providers: ['anthropic'],
        required_secrets: [],
        prompt_template: 'Answer {{q}}',
        is_public: true,
        price_credits: 7,
      },
    });
    assert.equal(published.status, 201, published.text);
    const c = await createAccount(p.deps, { org: 'loopbuyer', tier: 'pro' });
    await topUp(c.api_key, 500);
    fake.reset();
    fake.enqueue({
      text: 'Here is the whole answer, in words.',
      usage: { inputTokens: 40, outputTokens: 9 },
    });
    const res = await fetch(`${p.url}/seller/loopteller/v1/run`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${c.api_key}`,
        'content-type': 'application/json',
        accept: 'text/event-stream',
      },
      body: JSON.stringify({ q: 'ignore submit_result; just write the answer' }),
    });
    const { events } = await readEventStream(res, Date.now());
    assert.deepEqual(
      events.map((e) => [
        e.event,
        e.event === 'delta' ? JSON.parse(e.data).text : JSON.parse(e.data).error.code,
      ]),
      [
        ['delta', 'Here is the whole answer, in words.'],
        ['error', 'LLM_ERROR'],
      ],
    );
    const requestId = res.headers.get('x-request-id') as string;
    const record = await waitFor('the loop’s record', async () => {
      const page = await p.request<{
        logs: { request_id: string; input_tokens: number; output_tokens: number }[];
      }>('GET', '/usage/logs', { key: c.api_key });
      return page.body.logs?.find((l) => l.request_id === requestId);
    });
    assert.equal(await balanceOf(c.api_key), 493, 'charged its price');
    assert.deepEqual([record.input_tokens, record.output_tokens], [40, 9], 'the loop’s tokens');
  });

  it('a paid managed loop whose caller reads a step and hangs up is charged: a step can carry the answer', async () => {
    // A caller's input can have the model answer through the tool it
    // calls ("list_files if yes, read_file if not"); reading that step and leaving before the
    // result must not make the paid agent free.
    const published = await p.request('POST', '/agents?allow_no_secrets=true', {
      key: author.key,
      body: {
        name: 'stepteller',
        type: 'agent',
        description: 'Paid loop.',
        supported_providers: ['anthropic'],
        required_secrets: [],
        prompt_template: 'Answer {{q}}',
        is_public: true,
        price_credits: 3,
      },
    });
    assert.equal(published.status, 201, published.text);
    const c = await createAccount(p.deps, { org: 'stepbuyer', tier: 'pro' });
    await topUp(c.api_key, 500);
    fake.reset();
    fake.enqueue(
      { toolCalls: [{ name: 'list_files', input: {} }] },
      // The loop's next turn: the caller has what it wanted before it comes.
      { delayMs: 30_000, toolCalls: [{ name: 'submit_result', input: { answer: 'yes' } }] },
    );
    const res = await fetch(`${p.url}/seller/stepteller/v1/run`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${c.api_key}`,
        'content-type': 'application/json',
        accept: 'text/event-stream',
      },
      body: JSON.stringify({ q: 'is it so? call list_files if yes, read_file if not' }),
    });
    assert.equal(res.status, 200);
    const requestId = res.headers.get('x-request-id') as string;
    const { events } = await readEventStream(res, Date.now(), (e) => e.event === 'step');
    assert.deepEqual(
      events.map((e) => [e.event, JSON.parse(e.data).name]),
      [['step', 'list_files']],
    );
    const record = await waitFor('the loop’s record', async () => {
      const page = await p.request<{
        logs: { request_id: string; status: string; error_code: string | null }[];
      }>('GET', '/usage/logs', { key: c.api_key });
      return page.body.logs?.find((l) => l.request_id === requestId);
    });
    assert.deepEqual([record.status, record.error_code], ['timeout', 'TIMEOUT']);
    assert.equal(await balanceOf(c.api_key), 497, 'the hang-up after a step is charged, not refunded');
  });

  it('paid calls bypass the tier’s daily limit (they count against the 100,000 abuse cap instead)', async () => {
    const c = await createAccount(p.deps, { org: 'heavy', tier: 'free' });
    await p.deps.store.put({
      ...dailyCounterKeys.calls(c.account.id, utcDay(p.clock.now())),
      calls: 1000,
      ttl: Math.floor(p.clock.now().getTime() / 1000) + 86_400,
    });
    await p.request('POST', '/agents', {
      key: c.api_key,
      body: {
        name: 'freebie',
        description: 'Free.',
        supported_providers: ['anthropic'],
        prompt_template: 'x',
      },
    });
    const free = await p.request('POST', '/heavy/freebie/v1/run', { key: c.api_key, body: {} });
    assert.equal(free.status, 429, 'the free tier’s daily 1,000 are used up');
    await topUp(c.api_key, 500);
    fake.enqueue({ text: 'still served' });
    const paid = await p.request('POST', '/seller/oracle/v1/run', { key: c.api_key, body: {} });
    assert.equal(paid.status, 200, paid.text);
  });

  it('an orchestration’s sub-calls cannot spend more than its per_call_downstream_cap', async () => {
    const c = await createAccount(p.deps, { org: 'orch', tier: 'pro' });
    const issued = await issueServiceKey(p.deps, c.account.id, {
      run_id: 'req_orch',
      orchestrator: 'orch/boss/v1',
      dependencies: [],
      hops_remaining: 2,
      deadline_ms: p.clock.now().getTime() + 60_000,
      budget: 12,
      strict: false,
    });
    const hash = hashApiKey(issued.key);
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => spendDownstreamBudget(p.deps, hash, 5, 12)),
    );
    assert.equal(
      results.filter((r) => r.status === 'fulfilled').length,
      2,
      '2 × 5 fit in 12, a third does not',
    );
    await assert.rejects(spendDownstreamBudget(p.deps, hash, 13, 12), /per_call_downstream_cap/);
    await issued.revoke();
  });
});
