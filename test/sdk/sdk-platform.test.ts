import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { buildOpenApi } from '../../functions/platform/openapi.ts';
import { type AgentHostClient, AgentHostError, createClient } from '../../sdk/src/index.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { type FakeStripe, startFakeStripe } from '../helpers/fake-stripe.ts';
import { conformance } from '../helpers/openapi-conformance.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { publishAlwaysOn } from '../helpers/services.ts';

/** Polls `read` every 50 ms until `done` holds for its answer (at most `timeoutMs`). */
async function until<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An always-on HTTP app answering its version, its GREETING and an id new at each start. */
const webApp = (version: string) => `
import { createServer } from 'node:http';
const boot = Math.random().toString(36).slice(2);
createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ version: ${JSON.stringify(version)}, greeting: process.env.GREETING ?? null, boot }));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;
type WebAnswer = { version: string; greeting: string | null; boot: string };
/** The app's answer through the service's gateway URL, or undefined while it does not answer. */
const askApp = async (url: string): Promise<WebAnswer | undefined> => {
  const res = await fetch(url).catch(() => undefined);
  return res?.status === 200 ? ((await res.json()) as WebAnswer) : undefined;
};

describe('the SDK against the local platform', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let client: AgentHostClient;
  let apiKey: string;
  let workspaceId: string;
  const problems: string[] = [];

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform({
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
    });
    apiKey = (await createAccount(p.deps, { org: 'sdkco', tier: 'pro' })).api_key;
    client = createClient({ baseUrl: p.url, apiKey, retry: false });
    client.api.use(conformance(problems));
    workspaceId = (await client.workspaces.list()).workspaces[0]!.id;
  });
  after(async () => {
    await p.close();
    await fake.close();
  });

  it('tasks: create, get, update, complete, list by pages, delete', async () => {
    const created = await client.tasks.create({ title: 'first', priority: 'high', due_date: '2030-01-02' });
    assert.equal(created.status, 'open');
    assert.equal((await client.tasks.get(created.id)).title, 'first');
    assert.equal((await client.tasks.update(created.id, { status: 'in_progress' })).status, 'in_progress');
    assert.ok((await client.tasks.complete(created.id)).completed_at);
    for (const n of [2, 3, 4, 5]) await client.tasks.create({ title: `task ${n}` });
    const titles: string[] = [];
    for await (const t of client.tasks.iterate({}, 2)) titles.push(t.title);
    assert.equal(titles.length, 5, 'three pages of two');
    await client.tasks.delete(created.id);
    await assert.rejects(
      client.tasks.get(created.id),
      (err: AgentHostError) => err.code === 'NOT_FOUND' && err.status === 404,
    );
  });

  it('workspaces and secrets: create, list members, put, list and delete a secret', async () => {
    const ws = await client.workspaces.create({ name: 'Team SDK' });
    assert.equal((await client.workspaces.members(ws.id)).members.length, 1);
    await client.secrets.put(ws.id, { name: 'SDK_TOKEN', value: 's3cret' });
    const names = (await client.secrets.list(ws.id)).secrets.map((s) => s.name);
    assert.deepEqual(names, ['SDK_TOKEN']);
    await client.secrets.delete(ws.id, 'SDK_TOKEN');
    assert.equal((await client.secrets.list(ws.id)).secrets.length, 0);
  });

  it('members: an invite is accepted or declined by the invited account; remove, and leave', async () => {
    const ws = await client.workspaces.create({ name: 'Team Members' });
    const other = await createAccount(p.deps, { org: 'sdkmate', tier: 'free' });
    const otherClient = createClient({ baseUrl: p.url, apiKey: other.api_key, retry: false });
    const invited = await client.workspaces.invite(ws.id, { account_id: other.account.id, role: 'member' });
    assert.equal(invited.account_id, other.account.id);
    assert.equal(invited.email, null);
    assert.deepEqual(
      (await client.workspaces.invitations(ws.id)).invitations.map((i) => i.id),
      [invited.id],
    );
    assert.equal((await client.workspaces.members(ws.id)).members.length, 1, 'invited, not yet a member');
    const mine = await otherClient.invitations.list();
    assert.deepEqual(
      mine.invitations.map((i) => [i.id, i.workspace.name, i.invited_by.org]),
      [[invited.id, 'Team Members', 'sdkco']],
    );
    await otherClient.invitations.decline(invited.id);
    assert.equal((await client.workspaces.members(ws.id)).members.length, 1, 'a decline makes no member');
    await assert.rejects(otherClient.invitations.accept(invited.id), (err: unknown) => {
      assert.ok(err instanceof AgentHostError && err.code === 'NOT_FOUND', String(err));
      return true;
    });

    const again = await client.workspaces.invite(ws.id, { account_id: other.account.id });
    const joined = await otherClient.invitations.accept(again.id);
    assert.equal(joined.id, ws.id);
    assert.equal(joined.role, 'member');
    await client.workspaces.removeMember(ws.id, other.account.id);
    assert.deepEqual(
      (await client.workspaces.members(ws.id)).members.map((m) => m.org),
      ['sdkco'],
    );
    const third = await client.workspaces.invite(ws.id, { email: 'nobody@example.test' });
    await client.workspaces.revokeInvitation(ws.id, third.id);
    assert.deepEqual((await client.workspaces.invitations(ws.id)).invitations, []);
    await otherClient.invitations.accept(
      (await client.workspaces.invite(ws.id, { account_id: other.account.id })).id,
    );
    await otherClient.workspaces.removeMember(ws.id, other.account.id);
    assert.equal((await client.workspaces.members(ws.id)).members.length, 1, 'the member left');
  });

  it('agents and the public directory: publish, get, list, details, typed calls, files', async () => {
    const published = await client.agents.publish({
      name: 'summarise',
      description: 'Summarises text.',
      supported_providers: ['anthropic'],
      is_public: true,
      prompt_template: 'Summarise: {{text}}',
      input_schema: {
        type: 'object',
        properties: { text: { type: 'string' } },
        required: ['text'],
      },
      output_schema: { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'] },
    });
    assert.equal(published.ref, 'sdkco/summarise/v1');
    assert.equal((await client.agents.get(published.id)).execution_engine, 'direct_llm');
    const mine = [];
    for await (const a of client.agents.iterate()) mine.push(a.name);
    assert.deepEqual(mine, ['summarise']);
    const details = await client.public.get('sdkco', 'summarise', 'v1');
    assert.deepEqual(details.output_schema, published.output_schema);
    const listed = [];
    for await (const a of client.public.iterate()) listed.push(a.ref);
    assert.deepEqual(listed, ['sdkco/summarise/v1']);

    fake.enqueue({ text: JSON.stringify({ summary: 'short' }) });
    const summarise = client.agents.typed<{ text: string }, { summary: string }>('sdkco/summarise@v1');
    const result = await summarise({ text: 'A long text.' }, { timeoutMs: 60_000, tenant: 'tenant-a' });
    const summary: string = result.data.summary;
    assert.equal(summary, 'short');
    assert.equal(result.metadata.version, 'v1');
    // The answer's headers come along (the dashboard's playground shows them).
    assert.equal(result.headers.get('x-request-id'), result.metadata.request_id);
    assert.match(result.headers.get('x-ratelimit-remaining') ?? '', /^\d+$/);

    await client.agents.publish({
      name: 'reader',
      description: 'Reads files.',
      supported_providers: ['anthropic'],
      prompt_template: 'Read {{files}} for {{purpose}}',
      output_schema: { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'] },
    });
    const dir = p.dataDir;
    await writeFile(join(dir, 'note.txt'), 'file from a path');
    for (const [label, files] of [
      ['a path', [join(dir, 'note.txt')]],
      [
        'bytes and a stream',
        [
          { name: 'a.txt', data: Buffer.from('bytes file') },
          { name: 'b.txt', data: Readable.from(['stream file']) },
        ],
      ],
    ] as const) {
      fake.enqueue({ text: JSON.stringify({ summary: label }) });
      const withFiles = await client.agents.call<{ purpose: string }, { summary: string }>(
        'sdkco/reader@v1',
        { purpose: 'testing' },
        { files: [...files] },
      );
      assert.equal(withFiles.data.summary, label);
    }
    const prompts = fake.calls.slice(-2).map((c) => c.prompt);
    assert.match(prompts[0] ?? '', /file from a path/);
    assert.match(prompts[1] ?? '', /bytes file/);
    assert.match(prompts[1] ?? '', /stream file/);

    await assert.rejects(
      client.agents.call('sdkco/summarise@v1', { text: 'x' }, { deadline: p.clock.now().getTime() - 1000 }),
      (err: AgentHostError) => err.code === 'TIMEOUT',
      'the deadline travels as X-Platform-Deadline-Ms',
    );
    await assert.rejects(
      client.agents.call('sdkco/summarise@v1', { text: 'x' }, { maxHops: 0 }),
      (err: AgentHostError) =>
        err.code === 'INVALID_INPUT' && JSON.stringify(err.details).includes('max-hops'),
    );

    // The version's logs: a page, and every line by cursor (docs/logs.md).
    const [summariseV1] = (await client.agents.list({ name: 'summarise' })).agents.filter(
      (a) => a.version === 'v1',
    );
    assert.ok(summariseV1);
    const whole = await client.agents.logs(summariseV1.id, { limit: 5000 });
    assert.ok(whole.logs.length >= 2, JSON.stringify(whole));
    const first = await client.agents.logs(summariseV1.id, { limit: 1 });
    assert.deepEqual(first.logs, whole.logs.slice(0, 1));
    assert.equal(typeof first.next_cursor, 'string');
    const all = [];
    for await (const line of client.agents.iterateLogs(summariseV1.id, { limit: 2 })) all.push(line);
    assert.deepEqual(all, whole.logs);

    // Fork a public, source-available agent; then delete the copy after its delete-check.
    const open = await client.agents.publish({
      name: 'open-notes',
      description: 'Takes notes.',
      supported_providers: ['anthropic'],
      is_public: true,
      allow_local_download: true,
      prompt_template: 'Notes on {{topic}}',
    });
    const copy = await client.agents.fork(open.id, { new_name: 'my-notes' });
    assert.deepEqual([copy.ref, copy.forked_from], ['sdkco/my-notes/v1', open.ref]);
    const check = await client.agents.deleteCheck(copy.id);
    assert.deepEqual([check.can_delete, check.confirmation, check.versions], [true, 'none', ['v1']]);
    await client.agents.delete(copy.id);
    await assert.rejects(client.agents.get(copy.id), (err: AgentHostError) => err.code === 'NOT_FOUND');
  });

  it('calls: without an endpoint, the agent’s default_endpoint (one more request, only when it is not run)', async () => {
    await client.agents.publish({
      name: 'brief',
      description: 'Sums a text up.',
      supported_providers: ['anthropic'],
      default_endpoint: 'summarize',
      prompt_template: 'Sum up {{text}}',
    });
    await client.agents.publish({
      name: 'plain',
      description: 'Answers run.',
      supported_providers: ['anthropic'],
      prompt_template: 'Answer {{text}}',
    });
    // What this client sends, path by path.
    const sent: string[] = [];
    const watched = createClient({ baseUrl: p.url, apiKey, retry: false });
    watched.api.use({
      onRequest({ request }) {
        sent.push(`${request.method} ${new URL(request.url).pathname}`);
        return undefined;
      },
    });
    const call = async (ref: string, options: { endpoint?: string } = {}) => {
      sent.length = 0;
      fake.enqueue({ text: `answer of ${ref}` });
      const result = await watched.agents.call(ref, { text: 'a text' }, options);
      assert.deepEqual(result.data, { text: `answer of ${ref}` });
      return [...sent];
    };

    assert.deepEqual(await call('sdkco/brief@v1'), [
      'POST /sdkco/brief/v1/run',
      'POST /sdkco/brief/v1/summarize',
    ]);
    assert.equal(fake.calls.at(-1)?.prompt, 'Sum up a text', 'the model ran once, on the second request');
    assert.deepEqual(await call('sdkco/brief@v1/summarize'), ['POST /sdkco/brief/v1/summarize']);
    assert.deepEqual(await call('sdkco/plain@v1'), ['POST /sdkco/plain/v1/run'], 'no extra request for run');
    // An endpoint the caller named is not replaced by the agent's.
    sent.length = 0;
    await assert.rejects(
      watched.agents.call('sdkco/brief@v1', { text: 'x' }, { endpoint: 'run' }),
      (err: AgentHostError) => err.code === 'NOT_FOUND' && err.details?.default_endpoint === 'summarize',
    );
    assert.deepEqual(sent, ['POST /sdkco/brief/v1/run']);
  });

  it('schedules: create, list by pages, trigger', async () => {
    const created = await client.schedules.create(workspaceId, {
      agent: 'sdkco/summarise',
      cron_expression: '0 9 * * 1',
      input_data: { text: 'weekly' },
    });
    assert.equal((await client.schedules.get(workspaceId, created.id)).cron_expression, '0 9 * * 1');
    const ids = [];
    for await (const s of client.schedules.iterate(workspaceId)) ids.push(s.id);
    assert.deepEqual(ids, [created.id]);
    fake.enqueue({ text: JSON.stringify({ summary: 'triggered' }) });
    const run = await client.schedules.trigger(workspaceId, created.id);
    assert.equal(run.status, 'success');
    assert.deepEqual(run.output, { summary: 'triggered' });

    const disabled = await client.schedules.update(workspaceId, created.id, { enabled: false });
    assert.equal(disabled.enabled, false);
    assert.equal(disabled.next_run_at, null);
    const runs = await client.schedules.runs(workspaceId, created.id, { status: 'success' });
    assert.deepEqual(
      runs.runs.map((r) => r.run_id),
      [run.run_id],
    );
    assert.equal((await client.schedules.runs(workspaceId, created.id, { status: 'failed' })).total, 0);
    const events = await client.schedules.events(workspaceId, created.id);
    assert.deepEqual(
      events.events.map((e) => e.type),
      ['disabled', 'created'],
    );
    await client.schedules.delete(workspaceId, created.id);
    await assert.rejects(client.schedules.get(workspaceId, created.id), { code: 'NOT_FOUND' });
  });

  it('api keys and usage: create, list, delete a key; usage totals and call records by cursor', async () => {
    const key = await client.apiKeys.create({ name: 'ci' });
    assert.ok(key.api_key.startsWith('ahk_'));
    assert.ok((await client.apiKeys.list()).api_keys.some((k) => k.id === key.id));
    await client.apiKeys.delete(key.id);
    assert.ok(!(await client.apiKeys.list()).api_keys.some((k) => k.id === key.id));

    const summary = await client.usage.summary();
    assert.ok(summary.totals.calls >= 3, JSON.stringify(summary));
    const records = [];
    for await (const r of client.usage.iterateLogs({ limit: 1 })) records.push(r);
    assert.equal(records.length, summary.totals.calls);
  });

  it('services: deploy, get, list by pages, patch, restart, update to a new version, delete', async () => {
    // A service's timeline is one of its documented extra fields (JSON values to the types).
    const eventsOf = async (id: string) =>
      (await client.services.get(workspaceId, id)).events as { type: string; message: string }[];
    await publishAlwaysOn(p, apiKey, {
      name: 'web',
      description: 'A web app.',
      files: { 'server.mjs': webApp('v1') },
    });
    // Pinned to v1, so v2 arrives only through services.update.
    const deployed = await client.services.deploy(workspaceId, {
      agent: 'sdkco/web@v1',
      env: { GREETING: 'hello' },
    });
    assert.deepEqual([deployed.name, deployed.agent, deployed.agent_version], ['web', 'sdkco/web', 'v1']);
    assert.equal(deployed.state, 'provisioning');
    const url = deployed.url ?? assert.fail('an HTTP service has a gateway URL');
    const running = await until(
      'the service running',
      () => client.services.get(workspaceId, deployed.id),
      (s) => s.state === 'running',
    );
    assert.equal(running.health_status, 'healthy');
    const first = await until('the app answering', () => askApp(url), Boolean);
    assert.deepEqual([first?.version, first?.greeting], ['v1', 'hello']);

    const second = await client.services.deploy(workspaceId, { agent: 'sdkco/web@v1', name: 'web-two' });
    assert.equal((await client.services.list(workspaceId, { limit: 1 })).total, 2);
    const ids = [];
    for await (const s of client.services.iterate(workspaceId, 1)) ids.push(s.id);
    assert.deepEqual(ids.sort(), [deployed.id, second.id].sort(), 'two pages of one');

    const patched = await client.services.patch(workspaceId, deployed.id, { env: { GREETING: 'patched' } });
    assert.deepEqual(patched.env, { GREETING: 'patched' });
    const afterPatch = await until(
      'the new env',
      () => askApp(url),
      (a) => a?.greeting === 'patched',
    );
    assert.notEqual(afterPatch?.boot, first?.boot, 'a patch restarts the app');

    await client.services.restart(workspaceId, deployed.id);
    const restarted = await until(
      'a restarted app',
      () => askApp(url),
      (a) => a !== undefined && a.boot !== afterPatch?.boot,
    );
    assert.deepEqual([restarted?.version, restarted?.greeting], ['v1', 'patched']);
    assert.ok((await eventsOf(deployed.id)).some((e) => e.type === 'restarted'));
    const logsUntil = new Date().toISOString();
    const logPage = await client.services.logs(workspaceId, deployed.id, { limit: 5000, until: logsUntil });
    const logLines = [];
    for await (const line of client.services.iterateLogs(workspaceId, deployed.id, {
      limit: 1,
      until: logsUntil,
    }))
      logLines.push(line);
    assert.deepEqual(logLines, logPage.logs);
    assert.ok(logPage.logs.every((l) => l.request_id === null));

    await publishAlwaysOn(p, apiKey, {
      name: 'web',
      description: 'A web app.',
      files: { 'server.mjs': webApp('v2') },
    });
    assert.equal((await client.services.get(workspaceId, deployed.id)).agent_version, 'v1', 'pinned');
    const updated = await client.services.update(workspaceId, deployed.id);
    assert.equal(updated.agent_version, 'v2', 'the newest version');
    await until(
      'v2 answering',
      () => askApp(url),
      (a) => a?.version === 'v2',
    );
    assert.ok(
      (await eventsOf(deployed.id)).some((e) => e.type === 'version_updated' && /v1 to v2/.test(e.message)),
    );

    await client.services.delete(workspaceId, deployed.id);
    await assert.rejects(
      client.services.get(workspaceId, deployed.id),
      (err: AgentHostError) => err.code === 'NOT_FOUND' && err.status === 404,
    );
    await client.services.delete(workspaceId, second.id);
    assert.equal((await client.services.list(workspaceId)).total, 0);
  });

  it('billing with local payments: checkout, confirm, balance, transactions by pages', async () => {
    // An account of its own, so its ledger holds only these top-ups.
    const payer = createClient({
      baseUrl: p.url,
      apiKey: (await createAccount(p.deps, { org: 'sdkpayer', tier: 'pro' })).api_key,
      retry: false,
    });
    payer.api.use(conformance(problems));
    const start = await payer.billing.balance();
    assert.deepEqual([start.balance_credits, start.currency], [0, 'credits']);
    await assert.rejects(
      payer.billing.checkout({ credits: 10 }),
      (err: AgentHostError) =>
        err.code === 'INVALID_INPUT' && JSON.stringify(err.details).includes('credits'),
    );
    const checkout = await payer.billing.checkout({ credits: 1000 });
    assert.deepEqual([checkout.credits, checkout.amount_cents], [1000, 1000]);
    assert.equal(new URL(checkout.checkout_url).pathname, `/billing/checkout/${checkout.session_id}`);
    assert.equal((await payer.billing.balance()).balance_credits, 0, 'nothing lands before the payment');
    const confirmed = await payer.billing.confirmLocalCheckout(checkout.session_id);
    assert.deepEqual([confirmed.landed, confirmed.balance_credits], [true, 1000]);
    const again = await payer.billing.confirmLocalCheckout(checkout.session_id);
    assert.deepEqual([again.landed, again.balance_credits], [false, 1000], 'lands once');
    const next = await payer.billing.checkout({ credits: 600 });
    await payer.billing.confirmLocalCheckout(next.session_id);
    assert.equal((await payer.billing.balance()).balance_credits, 1600);

    const page = await payer.billing.transactions({ limit: 1 });
    assert.equal(page.total, 2);
    assert.equal(page.transactions.length, 1);
    const entries = [];
    for await (const t of payer.billing.iterateTransactions(1)) entries.push([t.type, t.amount, t.reference]);
    assert.deepEqual(
      entries,
      [
        ['topup', 600, `checkout:${next.session_id}`],
        ['topup', 1000, `checkout:${checkout.session_id}`],
      ],
      'newest first, two pages of one',
    );
  });

  it('platform: health, and the OpenAPI document the SDK is generated from', async () => {
    assert.equal((await client.platform.health()).status, 'ok');
    const { servers, ...served } = await client.platform.openapi();
    assert.deepEqual(servers, [{ url: p.deps.config.publicUrl }]);
    assert.deepEqual(served, JSON.parse(JSON.stringify(buildOpenApi())));
  });

  it('answered every request as /openapi.json documents it', () => {
    assert.deepEqual(problems, []);
  });
});

describe('the SDK’s billing against Stripe (a loopback server speaking Stripe’s API)', () => {
  let p: TestPlatform;
  let stripe: FakeStripe;
  let client: AgentHostClient;
  const problems: string[] = [];

  before(async () => {
    stripe = await startFakeStripe();
    p = await startTestPlatform(
      {
        PLATFORM_PAYMENTS: 'stripe',
        STRIPE_SECRET_KEY: stripe.secretKey,
        STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
        STRIPE_API_BASE: stripe.apiBase,
      },
      'sqlite',
      {},
      { inMemory: true },
    );
    const account = await createAccount(p.deps, { org: 'sdkstripe', tier: 'pro' });
    client = createClient({ baseUrl: p.url, apiKey: account.api_key, retry: false, fetch: p.fetch });
    client.api.use(conformance(problems));
  });
  after(async () => {
    await p.close();
    await stripe.close();
  });

  it('checkout answers Stripe’s session; once Stripe’s signed event arrives, balance and transactions show it', async () => {
    const checkout = await client.billing.checkout({ credits: 2500 });
    assert.deepEqual(
      [checkout.session_id, checkout.checkout_url, checkout.credits, checkout.amount_cents],
      ['cs_test_1', 'https://checkout.stripe.com/c/pay/cs_test_1', 2500, 2500],
    );
    await assert.rejects(
      client.billing.confirmLocalCheckout(checkout.session_id),
      (err: AgentHostError) => err.code === 'NOT_FOUND',
      'only local payments confirm through the API',
    );
    assert.equal((await client.billing.balance()).balance_credits, 0);
    // Stripe, not the SDK, calls the webhook.
    const event = stripe.completedEvent('evt_sdk_1', checkout.session_id);
    const hook = await p.fetch('/billing/webhook', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': stripe.signed(event) },
      body: event,
    });
    assert.equal(hook.status, 200, await hook.clone().text());
    assert.equal((await client.billing.balance()).balance_credits, 2500);
    const { transactions, total } = await client.billing.transactions();
    assert.equal(total, 1);
    assert.deepEqual(
      transactions.map((t) => [t.type, t.amount, t.reference, t.agent]),
      [['topup', 2500, 'checkout:cs_test_1', null]],
    );
    assert.deepEqual(problems, [], 'every answer as /openapi.json documents it');
  });
});
