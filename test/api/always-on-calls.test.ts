import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { connectMcp } from '../helpers/mcp-client.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { runCli } from '../helpers/process.ts';
import { publishAlwaysOn } from '../helpers/services.ts';

/**
 * An always-on agent is a service, not something to call: its app listens and never answers a
 * call, so run as a call it would hold a sandbox until the 300 s cap (504), or answer 500 when the
 * app exited, and be counted. A call is refused at once with 422 naming the deploy command, counting
 * nothing; MCP does not offer it as a tool; `agenthost publish` prints the deploy command.
 */

/** An app that listens until it is stopped: what an always-on agent's code is. */
const SERVER =
  "import { createServer } from 'node:http'; createServer((q, s) => s.end('hi')).listen(Number(process.env.PORT ?? 3000));";

type Usage = {
  totals: { calls: number };
  quota: { used: number };
  sandbox_quota: { used: number };
};

describe('always-on agents are deployed, not called', () => {
  let p: TestPlatform;
  let home: string;
  let owner: { key: string; accountId: string; workspaceId: string };
  let mcp: Client | undefined;

  const usage = async () => {
    const res = await p.request<Usage>('GET', '/usage', { key: owner.key });
    assert.equal(res.status, 200, res.text);
    return {
      calls: res.body.totals.calls,
      quota: res.body.quota.used,
      sandbox: res.body.sandbox_quota.used,
      remaining: res.headers.get('x-ratelimit-remaining'),
    };
  };

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'agenthost-always-on-'));
    p = await startTestPlatform();
    owner = await p.createAccount('svcco', 'pro');
    await publishAlwaysOn(p, owner.key, {
      name: 'web',
      description: 'A small web app.',
      files: { 'server.mjs': SERVER },
    });
    // An on-demand agent beside it, so that the tools list is not empty for another reason.
    const prompt = await p.request('POST', '/agents', {
      key: owner.key,
      body: { name: 'greet', description: 'Greets.', supported_providers: ['any'], prompt_template: 'Hi' },
    });
    assert.equal(prompt.status, 201, prompt.text);
  });
  after(async () => {
    await mcp?.close();
    await p?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('refuses a call at once with 422 naming the deploy command, counting nothing', async () => {
    const before = await usage();
    const started = Date.now();
    const res = await p.request('POST', '/svcco/web/v1/run', { key: owner.key, body: {} });
    const took = Date.now() - started;
    assert.equal(res.status, 422, res.text);
    const err = errorOf(res);
    assert.equal(err.code, 'UNPROCESSABLE');
    assert.equal(err.is_retryable, false);
    assert.match(err.message, /svcco\/web\/v1 is an always-on agent/);
    assert.match(err.message, /agenthost services deploy svcco\/web/);
    assert.ok(took < 1_000, `answered in ${took} ms`);
    assert.equal(res.headers.get('x-ratelimit-remaining'), before.remaining, 'the quota is unchanged');
    assert.deepEqual(await usage(), before, 'neither quota nor usage counts it');
  });

  it('is no MCP tool: not listed, and its tool name is an unknown tool', async () => {
    mcp = await connectMcp(p.url, owner.key);
    const names = (await mcp.listTools()).tools.map((t) => t.name);
    assert.deepEqual(names, ['svcco__greet']);
    const before = await usage();
    await assert.rejects(mcp.callTool({ name: 'svcco__web', arguments: {} }), (err: unknown) => {
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.code, ErrorCode.InvalidParams);
      assert.match(err.message, /Unknown tool/);
      return true;
    });
    assert.deepEqual(await usage(), before);
  });

  it('agenthost init and publish show the deploy command for it, not a call command', async () => {
    const env = { AGENTHOST_URL: p.url, AGENTHOST_API_KEY: owner.key, XDG_CONFIG_HOME: join(home, 'cfg') };
    const dir = join(home, 'site');
    const init = await runCli(['init', '--type', 'service', dir], env);
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stderr, /^ +deploy it: +agenthost services deploy <org>\/site$/m);
    assert.doesNotMatch(init.stderr, /call it:/);
    const res = await runCli(['publish', dir, '--allow-no-secrets'], env);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^published +svcco\/site@v1$/m);
    assert.match(res.stdout, /^deploy +agenthost services deploy svcco\/site$/m);
    assert.doesNotMatch(res.stdout, /^(call|url) /m);
  });
});
