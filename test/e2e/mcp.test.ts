import assert from 'node:assert/strict';
import { after, before, beforeEach, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { accountsDeps } from '../../functions/cli/accounts-deps.ts';
import { TIER_LIMITS } from '../../functions/core/accounts/tiers.ts';
import { incrementDailyCalls } from '../../functions/core/usage/daily-usage.ts';
import { parseConfig } from '../../functions/platform/config.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { bundleOf } from '../helpers/bundles.ts';
import { type Deployment, startDeployment } from '../helpers/deployment.ts';
import { eachDeployment } from '../helpers/each-deployment.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { connectMcp, postMcpAs, toolErrorOf } from '../helpers/mcp-client.ts';

/**
 * POST /mcp against both deployments with the MCP SDK's own client: on the emulated one the
 * synthesized mcp Lambda serves it behind the emulated API Gateway (stateless, JSON responses, no
 * process kept between requests), and its tool calls run prompt agents through a loopback
 * provider and tool agents in the sandbox (an ECS task there, bubblewrap locally).
 */

const readStdin =
  "const chunks = []; for await (const c of process.stdin) chunks.push(c); const input = JSON.parse(Buffer.concat(chunks).toString() || '{}');";

eachDeployment('agents as MCP tools', {}, (kind) => {
  let d: Deployment;
  let fake: FakeLlmProviders;
  let other: { key: string; accountId: string };
  const clients: Client[] = [];
  const connect = async (key: string, query = '') => {
    const client = await connectMcp(d.url, key, query);
    clients.push(client);
    return client;
  };

  before(async () => {
    fake = await startFakeLlm();
    d = await startDeployment(kind, {
      OPENAI_API_KEY: 'sk-openai-test',
      OPENAI_BASE_URL: fake.baseUrls.openai,
    });
    const published = await d.request('POST', '/agents', {
      body: {
        name: 'summarise',
        description: 'Summarises text.',
        supported_providers: ['openai'],
        default_models: { openai: 'gpt-test-mini' },
        prompt_template: 'Summarise: {{text}}',
        input_schema: {
          type: 'object',
          properties: { text: { type: 'string', minLength: 1 } },
          required: ['text'],
        },
        is_public: true,
      },
    });
    assert.equal(published.status, 201, published.text);
    const tool = await d.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      body: {
        name: 'adder',
        type: 'tool',
        description: 'Adds.',
        supported_providers: ['any'],
        runtime: { command: 'node main.mjs' },
        required_secrets: [],
        output_schema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
      },
    });
    assert.equal(tool.status, 201, tool.text);
    const up = await d.request('POST', `/agents/${tool.body.id}/upload`, {
      rawBody: await bundleOf({
        'main.mjs': `${readStdin} console.log(JSON.stringify({ sum: input.a + input.b }));`,
      }),
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(up.status, 200, up.text);
    other = await d.createAccount(`mcp-other-${kind}`, 'pro');
    const hidden = await d.request('POST', '/agents', {
      key: other.key,
      body: {
        name: 'hidden',
        description: 'Private to its workspace.',
        supported_providers: ['openai'],
        prompt_template: 'Hidden',
      },
    });
    assert.equal(hidden.status, 201, hidden.text);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await d?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  it('lists the caller’s agents as tools and calls a prompt agent and a sandboxed tool agent', async () => {
    const client = await connect(d.ownerKey);
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['local__adder', 'local__summarise'],
    );
    fake.enqueue({ text: 'short' });
    const summary = await client.callTool({
      name: 'local__summarise',
      arguments: { text: 'A long text.' },
    });
    assert.deepEqual(summary.structuredContent, { text: 'short' }, JSON.stringify(summary));
    assert.equal(fake.calls.at(-1)?.prompt, 'Summarise: A long text.');
    const sum = await client.callTool({ name: 'local__adder', arguments: { a: 2, b: 3 } });
    assert.deepEqual(sum.structuredContent, { sum: 5 }, `${JSON.stringify(sum)}\n${d.output().slice(-2000)}`);
    const invalid = await client.callTool({ name: 'local__summarise', arguments: {} });
    assert.equal(toolErrorOf(invalid).code, 'INVALID_INPUT');
  });

  it('keeps another tenant’s private agent out of the list and refuses it by name', async () => {
    const client = await connect(d.ownerKey, `?public=mcp-other-${kind}/hidden`);
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(!names.some((n) => n.includes('hidden')), names.join(', '));
    await assert.rejects(client.callTool({ name: `mcp-other-${kind}__hidden`, arguments: {} }), McpError);
    assert.equal(fake.calls.length, 0);
    // Its owner sees it, and another account sees the owner's public agent only when it names it.
    const theirs = await connect(other.key, '?public=local/summarise');
    assert.deepEqual(
      (await theirs.listTools()).tools.map((t) => t.name),
      ['local__summarise', `mcp-other-${kind}__hidden`],
    );
  });

  it('answers a refused call (the daily quota) as a tool error with the platform’s code', async () => {
    const deps = await accountsDeps(parseConfig({ [ENV.dataDir]: d.dataDir, [ENV.logLevel]: 'silent' }));
    try {
      await incrementDailyCalls(deps, other.accountId, TIER_LIMITS.pro.dailyCalls);
    } finally {
      await deps.store.close();
    }
    const client = await connect(other.key, '?public=local/summarise');
    const refused = await client.callTool({ name: 'local__summarise', arguments: { text: 'x' } });
    assert.equal(toolErrorOf(refused).code, 'RATE_LIMITED');
    assert.equal(fake.calls.length, 0);
  });

  it('runs a tool call made a task as a run (on AWS through the mcp function), polled to its result; another account finds no such task', async () => {
    const client = await connect(d.ownerKey);
    await client.listTools(); // the SDK's client learns which tools may be tasks
    fake.setResponder(() => ({ text: 'task summary', delayMs: 300 }));
    let taskId = '';
    let final: Record<string, unknown> | undefined;
    const kinds: string[] = [];
    for await (const m of client.experimental.tasks.callToolStream({
      name: 'local__summarise',
      arguments: { text: 'A long text.' },
    })) {
      kinds.push(m.type);
      if (m.type === 'taskCreated') taskId = m.task.taskId;
      if (m.type === 'result') final = m.result;
    }
    assert.equal(kinds[0], 'taskCreated');
    assert.equal(kinds.at(-1), 'result');
    assert.deepEqual(final?.structuredContent, { text: 'task summary' });
    // The task is the caller's run.
    const run = await d.request<{ status: string }>('GET', `/runs/${taskId}`);
    assert.equal(run.body.status, 'succeeded', run.text);
    const stranger = await connect(other.key);
    await assert.rejects(
      stranger.experimental.tasks.getTask(taskId),
      (err: unknown) => err instanceof McpError && /not found/i.test(err.message),
    );
    assert.equal((await d.request('GET', `/runs/${taskId}`, { key: other.key })).status, 404);
  });

  it('answers 401 with a bearer challenge without a key, 403 to a foreign Host or Origin, 405 for GET', async () => {
    await assert.rejects(connectMcp(d.url, null), (err: unknown) => {
      assert.ok(err instanceof StreamableHTTPError && err.code === 401, String(err));
      return true;
    });
    const anonymous = await postMcpAs(d.url, null, {});
    assert.equal(anonymous.status, 401, anonymous.body);
    assert.equal(anonymous.headers['www-authenticate'], 'Bearer realm="agenthost"');
    // DNS rebinding: the platform's own address, under another name (or from another site's page).
    const { host } = new URL(d.url);
    const foreign: Record<string, string>[] = [
      { host: 'evil.example' },
      { host, origin: 'http://evil.example' },
    ];
    for (const headers of foreign) {
      const refused = await postMcpAs(d.url, d.ownerKey, headers);
      assert.equal(refused.status, 403, `${JSON.stringify(headers)}: ${refused.body}`);
      assert.equal((JSON.parse(refused.body) as { error: { code: string } }).error.code, 'FORBIDDEN');
    }
    const own = await postMcpAs(d.url, d.ownerKey, { host, origin: `http://${host}` });
    assert.equal(own.status, 200, own.body);
    const get = await d.request('GET', '/mcp', { headers: { accept: 'text/event-stream' } });
    assert.equal(get.status, 405, get.text);
  });
});
