import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { deliverAlert } from '../../functions/adapters/outbound/alert-delivery.ts';
import { checkOutboundUrl } from '../../functions/adapters/outbound/outbound-url.ts';
import { issueServiceKey } from '../../functions/core/calls/service-keys.ts';
import { signatureHeader } from '../../functions/core/runs/webhook-signature.ts';
import { verifyWebhook } from '../../sdk/src/webhooks.ts';
import { type AlertReceiver, startAlertReceiver } from '../helpers/alert-receiver.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { connectMcp, startTask, toolErrorOf } from '../helpers/mcp-client.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { ECHO_AGENT, startRunsPlatform } from '../helpers/schedules.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * Attacks on run completion webhooks and MCP tasks, each asserting the SAFE behaviour: the test
 * passes while the platform holds. In memory, as test/api/run-webhooks.test.ts and
 * test/api/mcp-tasks.test.ts set up.
 */

type RunDoc = {
  run_id: string;
  status: string;
  ended_at: string | null;
  request_id: string;
  webhook: { url: string } | null;
  result: { status: number; body: Record<string, unknown> } | null;
};

const SIGNATURE = 'x-platform-signature';
const runCredential = (p: TestPlatform, accountId: string) =>
  issueServiceKey(p.deps, accountId, {
    run_id: 'req_attack',
    orchestrator: 'attack/echo/v1',
    dependencies: [],
    hops_remaining: 1,
    deadline_ms: Date.now() + 60_000,
    budget: 0,
    strict: false,
  });

describe('attack: run webhooks', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let receiver: AlertReceiver;
  let alpha: { key: string; accountId: string; workspaceId: string };
  let bravo: { key: string; accountId: string; workspaceId: string };
  let secret: string;

  const start = (headers: Record<string, string>, key = alpha.key) =>
    p.request<RunDoc>('POST', '/atk-alpha/echo/v1/run', {
      key,
      body: { text: 'hi' },
      headers: { prefer: 'respond-async', ...headers },
    });
  const runCount = async (key = alpha.key) =>
    (await p.request<{ runs: RunDoc[] }>('GET', '/runs', { key })).body.runs.length;

  before(async () => {
    fake = await startFakeLlm();
    p = await startRunsPlatform(fake, 'sqlite', {}, { inMemory: true });
    alpha = await p.createAccount('atk-alpha', 'pro');
    bravo = await p.createAccount('atk-bravo', 'pro');
    assert.equal((await p.request('POST', '/agents', { key: alpha.key, body: ECHO_AGENT })).status, 201);
    const made = await p.request<{ secret: string }>('POST', '/api-keys/webhook-secret', { key: alpha.key });
    assert.equal(made.status, 201, made.text);
    secret = made.body.secret;
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

  it('a run credential (ahr_) cannot rotate the signing secret nor read the account’s runs', async () => {
    const issued = await runCredential(p, alpha.accountId);
    try {
      for (const [method, path] of [
        ['POST', '/api-keys/webhook-secret'],
        ['GET', '/runs'],
        ['GET', '/api-keys'],
      ] as const) {
        const res = await p.request(method, path, { key: issued.key });
        assert.equal(res.status, 401, `${method} ${path}: ${res.text}`);
        assert.ok(!res.text.includes('whsec_'));
      }
      // A run credential's call with a webhook is refused: a sub-call is never a run.
      const sub = await start({ 'x-platform-webhook': receiver.url }, issued.key);
      assert.ok(sub.status >= 400 && sub.status < 500, sub.text);
    } finally {
      await issued.revoke();
    }
    // The secret still signs: nothing rotated it.
    const started = await start({ 'x-platform-webhook': receiver.url });
    assert.equal(started.status, 202, started.text);
    const [d] = await receiver.waitFor(1);
    assert.equal(
      await verifyWebhook(secret, String(d?.headers[SIGNATURE]), d?.raw ?? '', 300, p.clock.now().getTime()),
      true,
    );
  });

  it('the secret’s vault slot is not reachable through the workspace secret routes', async () => {
    const slot = `account-${alpha.accountId}`;
    const list = await p.request('GET', `/workspaces/${slot}/secrets`, { key: alpha.key });
    assert.ok(list.status >= 400 && list.status < 500, list.text);
    assert.ok(!list.text.includes('run-webhook-signing-secret'));
    for (const name of ['run-webhook-signing-secret', 'RUN_WEBHOOK_SIGNING_SECRET']) {
      const put = await p.request('PUT', `/workspaces/${slot}/secrets/${name}`, {
        key: alpha.key,
        body: { value: 'whsec_attacker' },
      });
      assert.ok(put.status >= 400 && put.status < 500, `${name}: ${put.status} ${put.text}`);
      const del = await p.request('DELETE', `/workspaces/${slot}/secrets/${name}`, { key: bravo.key });
      assert.ok(del.status >= 400 && del.status < 500, `${name}: ${del.status} ${del.text}`);
    }
    // An agent cannot be given it as a required secret (not an env var name).
    const agent = await p.request('POST', '/agents', {
      key: alpha.key,
      body: { ...ECHO_AGENT, name: 'thief', required_secrets: ['run-webhook-signing-secret'] },
    });
    assert.equal(agent.status, 400, agent.text);
  });

  it('another account cannot read, cancel or follow a webhook run, nor see its webhook URL', async () => {
    const started = await start({
      'x-platform-webhook': `${receiver.url}?token=tok-123`,
    });
    assert.equal(started.status, 202, started.text);
    const id = started.body.run_id;
    for (const [method, path] of [
      ['GET', `/runs/${id}`],
      ['GET', `/runs/${id}/events`],
      ['POST', `/runs/${id}/cancel`],
    ] as const) {
      const res = await p.request(method, path, { key: bravo.key });
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
      assert.ok(!res.text.includes('tok-123'));
    }
    const listed = await p.request('GET', '/runs', { key: bravo.key });
    assert.ok(!listed.text.includes(id));
    await receiver.waitFor(1);
  });

  it('never leaks the secret: run, events, usage logs, trace, log lines, a refused delivery', async () => {
    receiver.answer(400);
    const started = await start({
      'x-platform-webhook': `${receiver.url}?token=tok-456`,
    });
    assert.equal(started.status, 202, started.text);
    const id = started.body.run_id;
    const run = await waitFor('the run to end', async () => {
      const r = await p.request<RunDoc>('GET', `/runs/${id}`, { key: alpha.key });
      return r.body.ended_at ? r.body : undefined;
    });
    await waitFor('the refused delivery', async () => receiver.refused() >= 1 || undefined);
    const reads = [
      await p.request('GET', `/runs/${id}/events`, { key: alpha.key }),
      await p.request('GET', '/usage/logs', { key: alpha.key }),
      await p.request(
        'GET',
        `/agents/${(run as unknown as { agent_id: string }).agent_id}/calls/${run.request_id}/trace`,
        { key: alpha.key },
      ),
    ];
    assert.deepEqual(
      reads.map((r) => r.status),
      [200, 200, 200],
      'the reads the leak check looks at',
    );
    assert.ok(reads[1]?.text.includes(run.request_id), 'the run’s usage record is among those read');
    const seen = [JSON.stringify(run), ...reads.map((r) => r.text), p.logs.join('\n')].join('\n');
    assert.ok(!seen.includes(secret), 'the signing secret leaked');
    assert.ok(!seen.includes(secret.slice('whsec_'.length)), 'the signing secret leaked');
    // The receiver's token (in the query) is not logged nor shown either.
    assert.ok(!seen.includes('tok-456'), 'the webhook URL’s query leaked');
  });

  it('malformed, credentialed or very long webhook URLs are 400, never 500, and start no run', async () => {
    const runs = await runCount();
    const odd = `http://[::1 http://%zz/ javascript:alert(1) data:text/plain,hi file:///etc/passwd
      http://user:pass@127.0.0.1/ http://user@127.0.0.1/ http://:pw@127.0.0.1/ http://[fe80::1%25lo]/
      http://[fe80::1]/ http://169.254.169.254.nip.io.invalid/ http://0xa9.0xfe.0xa9.0xfe/ http://2852039166/
      http://0251.0376.0251.0376/ http://[::ffff:a9fe:a9fe]/ http://[64:ff9b::169.254.169.254]/
      http://[2002:a9fe:a9fe::1]/ http://0/`.split(/\s+/);
    const long = [`http://${'a'.repeat(300)}.invalid/`, `http://${'a.'.repeat(1020)}invalid/`];
    for (const url of [...odd, ...long, `${receiver.url}?${'x'.repeat(2048)}`, 'http://a b/', '', ' ']) {
      const res = await start({ 'x-platform-webhook': url });
      assert.equal(
        res.status,
        400,
        `${JSON.stringify(url.slice(0, 80))}: ${res.status} ${res.text.slice(0, 300)}`,
      );
      assert.equal(errorOf(res).code, 'INVALID_INPUT');
    }
    assert.equal(await runCount(), runs);
    assert.equal(fake.calls.length, 0);
  });

  it('signs exactly the bytes it sends, whatever the output holds (unicode, U+2028, quotes)', async () => {
    fake.setResponder(() => ({ text: 'é 😀 \u2028\u2029 "q" \\ </script> \u0000' }));
    const started = await start({ 'x-platform-webhook': receiver.url });
    assert.equal(started.status, 202, started.text);
    const [d] = await receiver.waitFor(1);
    assert.ok(d);
    const now = p.clock.now().getTime();
    assert.equal(await verifyWebhook(secret, String(d.headers[SIGNATURE]), d.raw, 300, now), true);
    // As bytes too (a receiver that verifies the raw Buffer).
    assert.equal(
      await verifyWebhook(secret, String(d.headers[SIGNATURE]), new TextEncoder().encode(d.raw), 300, now),
      true,
    );
    // Another account's secret does not verify it.
    const other = await p.request<{ secret: string }>('POST', '/api-keys/webhook-secret', { key: bravo.key });
    assert.equal(
      await verifyWebhook(other.body.secret, String(d.headers[SIGNATURE]), d.raw, 300, now),
      false,
    );
  });
});

describe('attack: outbound rules at send time', () => {
  let receiver: AlertReceiver;
  before(async () => {
    receiver = await startAlertReceiver();
  });
  after(async () => receiver?.close());

  it('refuses IPv6/IPv4-mapped, embedded and numeric forms of refused addresses in AWS mode', async () => {
    const none = async () => [] as string[];
    const refused = `
      https://127.0.0.1/ https://127.1/ https://2130706433/ https://0x7f000001/
      https://0177.0.0.1/ https://[::1]/ https://[::ffff:127.0.0.1]/ https://[::ffff:7f00:1]/
      https://[::ffff:0:7f00:1]/ https://[::127.0.0.1]/ https://[0:0:0:0:0:ffff:10.0.0.1]/ https://[64:ff9b::10.0.0.1]/
      https://[64:ff9b:1::a00:1]/ https://[2002:7f00:1::]/ https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/ https://[fc00::1]/
      https://[fe80::1]/ https://[fd00:ec2::254]/ https://[::]/ https://0.0.0.0/
      https://100.64.0.1/ https://169.254.170.2/ https://100.100.100.200/`
      .split(/\s+/)
      .filter(Boolean);
    // Teredo 2001:0:…:80ff:fffe is 127.0.0.1 inverted.
    for (const url of refused) {
      const checked = await checkOutboundUrl(url, { mode: 'aws', resolve: none });
      assert.equal(checked.ok, false, `${url} was accepted`);
    }
    // A name with one bad address among good ones.
    const mixed = await checkOutboundUrl('https://hook.example/', {
      mode: 'aws',
      resolve: async () => ['93.184.216.34', '169.254.169.254'],
    });
    assert.equal(mixed.ok, false);
    const mixed6 = await checkOutboundUrl('https://hook.example/', {
      mode: 'aws',
      resolve: async () => ['2606:2800:220:1:248:1893:25c8:1946', '::ffff:10.1.1.1'],
    });
    assert.equal(mixed6.ok, false);
  });

  it('DNS rebinding: a name that turns private by send time is refused, and no request is made', async () => {
    let lookups = 0;
    const rebinding = async () => (lookups++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']);
    const admitted = await checkOutboundUrl('https://rebind.example/hook', {
      mode: 'aws',
      resolve: rebinding,
    });
    assert.equal(admitted.ok, true);
    const before = receiver.received.length;
    const result = await deliverAlert(
      {
        url: 'https://rebind.example/hook',
        payload: { a: 1 },
        label: 'atk',
        attempts: 3,
      },
      { mode: 'aws', resolve: rebinding, backoffMs: [1, 1] },
    );
    assert.equal(result.delivered, false);
    assert.equal(result.attempts, 1, 'a refused address is final, not retried');
    assert.match(result.error ?? '', /loopback/);
    assert.equal(receiver.received.length, before);
  });

  it('connects only to the addresses it checked (the connection is pinned, not looked up again)', async () => {
    const port = new URL(receiver.url).port;
    // A name only the checking resolver knows: a second lookup (the system's) could not find it.
    const url = `http://pinned-only.invalid:${port}/hooks/alerts`;
    const calls: string[] = [];
    const result = await deliverAlert(
      { url, payload: { pinned: true }, label: 'atk' },
      {
        mode: 'local',
        resolve: async (host) => {
          calls.push(host);
          return ['127.0.0.1'];
        },
        backoffMs: [1],
      },
    );
    assert.equal(result.delivered, true, result.error ?? '');
    assert.deepEqual(calls, ['pinned-only.invalid']);
    assert.deepEqual(receiver.received.at(-1)?.body, { pinned: true });
  });

  it('does not follow a redirect, to a metadata address or anywhere', async () => {
    let hits = 0;
    const target = createServer((_req, res) => {
      hits++;
      res.end('ok');
    });
    const redirector = createServer((req, res) => {
      req.resume();
      const to =
        req.url === '/meta'
          ? 'http://169.254.169.254/latest/meta-data/'
          : `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
      res.writeHead(req.url === '/meta' ? 302 : 307, { location: to });
      res.end();
    });
    const listen = async (s: Server) => {
      s.listen(0, '127.0.0.1');
      await once(s, 'listening');
      return (s.address() as AddressInfo).port;
    };
    await listen(target);
    const port = await listen(redirector);
    try {
      for (const path of ['/meta', '/loop']) {
        const result = await deliverAlert(
          {
            url: `http://127.0.0.1:${port}${path}`,
            payload: { a: 1 },
            label: 'atk',
            attempts: 3,
          },
          { mode: 'local', backoffMs: [1, 1] },
        );
        assert.equal(result.delivered, false);
        assert.equal(result.attempts, 1);
        assert.match(result.error ?? '', /redirect/);
      }
      assert.equal(hits, 0, 'a redirect was followed');
    } finally {
      redirector.close();
      target.close();
    }
  });

  it('a delivery sent through the Lambda (its JSON round trip) still verifies: canonical body', async () => {
    const s = 'whsec_test-secret';
    const payload = {
      '10': 'ten',
      b: 'é😀\u2028',
      a: [1.5, 1e21, -0, 0.1 + 0.2],
      '2': null,
      nested: { z: 1, '1': 2 },
    };
    const t = Math.floor(Date.now() / 1000);
    const delivery = {
      url: receiver.url,
      payload,
      label: 'atk',
      headers: { 'X-Platform-Signature': signatureHeader(s, t, JSON.stringify(payload)) },
    };
    // What LambdaNotifier.enqueue sends and the delivery function parses back.
    const shipped = JSON.parse(JSON.stringify(delivery)) as typeof delivery;
    const before = receiver.received.length;
    const result = await deliverAlert(shipped, { mode: 'local', backoffMs: [1] });
    assert.equal(result.delivered, true);
    const got = receiver.received[before];
    assert.ok(got);
    assert.equal(await verifyWebhook(s, String(got.headers[SIGNATURE]), got.raw), true);
  });

  it('replay and header tricks: another t, a t appended, a far future t, are refused', async () => {
    const s = 'whsec_test-secret';
    const body = '{"run_id":"r"}';
    const now = Date.now();
    const old = Math.floor(now / 1000) - 3600;
    const captured = signatureHeader(s, old, body);
    const mac = captured.split('v1=')[1];
    const fresh = Math.floor(now / 1000);
    assert.equal(await verifyWebhook(s, captured, body, 300, now), false);
    assert.equal(await verifyWebhook(s, `t=${fresh},v1=${mac}`, body, 300, now), false);
    assert.equal(await verifyWebhook(s, `${captured},t=${fresh}`, body, 300, now), false);
    assert.equal(await verifyWebhook(s, `t=${fresh},${captured}`, body, 300, now), false);
    assert.equal(await verifyWebhook(s, `t=0${old},v1=${mac}`, body, 300, now), false);
    const future = signatureHeader(s, fresh + 3600, body);
    assert.equal(await verifyWebhook(s, future, body, 300, now), false);
    // Moving the dot: a body that begins with the t's digits does not verify under another t.
    const shifted = signatureHeader(s, fresh, `1.${body}`);
    assert.equal(await verifyWebhook(s, `t=${fresh}1,v1=${shifted.split('v1=')[1]}`, body, 1e9, now), false);
  });
});

describe('attack: MCP tasks', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let alpha: { key: string; accountId: string };
  let bravo: { key: string; accountId: string };
  const clients: Client[] = [];
  const connect = async (key: string) => {
    const client = await connectMcp(p.url, key);
    clients.push(client);
    return client;
  };
  const runs = async (key: string) =>
    (await p.request<{ runs: RunDoc[] }>('GET', '/runs', { key })).body.runs;
  const rejectsAsParams = (err: unknown) => {
    assert.ok(err instanceof McpError, String(err));
    assert.equal(err.code, ErrorCode.InvalidParams, err.message);
    return true;
  };

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform({ OPENAI_API_KEY: 'sk-openai-test', OPENAI_BASE_URL: fake.baseUrls.openai });
    alpha = await p.createAccount('atk-task-alpha', 'pro');
    bravo = await p.createAccount('atk-task-bravo', 'pro');
    const res = await p.request('POST', '/agents?allow_no_secrets=true', {
      key: alpha.key,
      body: ECHO_AGENT,
    });
    assert.equal(res.status, 201, res.text);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await p?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  it('tasks/list with another account’s run id as cursor, or an injected cursor, shows nothing of theirs', async () => {
    fake.setResponder(() => ({ text: 'mine' }));
    const mine = await connect(alpha.key);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await startTask(mine, 'atk-task-alpha__echo', { text: 'x' })).taskId);
    const theirs = await connect(bravo.key);
    // The newest id sorts after all others: as a cursor it would page through "older" runs.
    const last = ids.at(-1) as string;
    const paged = await theirs.experimental.tasks.listTasks(last);
    assert.deepEqual(paged.tasks, []);
    const maxId = 'ffffffff-ffff-ffff-ffff-ffffffffffff';
    assert.deepEqual((await theirs.experimental.tasks.listTasks(maxId)).tasks, []);
    for (const cursor of [
      `${last}#`,
      `${last}\u0000`,
      'RUN#',
      '',
      'x'.repeat(10_000),
      `${last.toUpperCase()}`,
    ]) {
      const out = await theirs.experimental.tasks.listTasks(cursor).then(
        (r) => r,
        (err: unknown) => err,
      );
      if (out instanceof Error) rejectsAsParams(out);
      else assert.ok(!JSON.stringify(out).includes(ids[0] as string), `cursor ${cursor.slice(0, 40)} leaked`);
    }
    // HTTP side: the same boundary.
    for (const [method, path] of [
      ['GET', `/runs/${last}`],
      ['GET', `/runs/${last}/events`],
      ['POST', `/runs/${last}/cancel`],
    ] as const) {
      assert.equal((await p.request(method, path, { key: bravo.key })).status, 404, `${method} ${path}`);
    }
    assert.ok(!(await p.request('GET', `/runs?cursor=${maxId}`, { key: bravo.key })).text.includes(last));
    for (const id of ids) await mine.experimental.tasks.getTaskResult(id, CallToolResultSchema);
  });

  it('a tool call refused before it runs (another account’s tool, bad input) starts no run and calls no model', async () => {
    const theirs = await connect(bravo.key);
    const before = { a: (await runs(alpha.key)).length, b: (await runs(bravo.key)).length };
    await assert.rejects(startTask(theirs, 'atk-task-alpha__echo', { text: 'x' }), rejectsAsParams);
    const mine = await connect(alpha.key);
    await assert.rejects(startTask(mine, 'atk-task-alpha__echo', { text: 42 }), rejectsAsParams);
    await assert.rejects(startTask(mine, 'atk-task-alpha__nope', { text: 'x' }), rejectsAsParams);
    assert.equal((await runs(alpha.key)).length, before.a);
    assert.equal((await runs(bravo.key)).length, before.b);
    assert.equal(fake.calls.length, 0);
  });

  it('a run credential cannot reach tasks/list, tasks/get or a task-augmented tools/call', async () => {
    const issued = await runCredential(p, alpha.accountId);
    try {
      for (const body of [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tasks/get',
          params: { taskId: '0193a5c2-0000-7000-8000-000000000000' },
        },
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: {
            name: 'atk-task-alpha__echo',
            arguments: { text: 'x' },
            task: {},
          },
        },
      ]) {
        const res = await fetch(`${p.url}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${issued.key}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify(body),
        });
        assert.equal(res.status, 401, await res.text());
      }
    } finally {
      await issued.revoke();
    }
  });

  // Last: it moves the clock.
  it('tasks/result of a run that never ends answers once the run is past its deadline (interrupted), not never', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let asked!: () => void;
    const reached = new Promise<void>((r) => {
      asked = r;
    });
    fake.setResponder(async () => {
      asked();
      await gate;
      return { text: 'too late' };
    });
    const client = await connect(alpha.key);
    const task = await startTask(client, 'atk-task-alpha__echo', { text: 'x' });
    await reached;
    try {
      const result = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, {
        timeout: 20_000,
      });
      // The process that ran it is as good as gone: well past its deadline.
      p.clock.advance(6 * 3_600_000);
      const answer = await result;
      assert.equal(toolErrorOf(answer).code, 'SERVICE_UNAVAILABLE');
      assert.match(toolErrorOf(answer).message, /interrupted/);
    } finally {
      release();
    }
  });
});
