import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { agentKeys } from '../../functions/core/agents/agent-keys.ts';
import { bundleOf } from '../helpers/bundles.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { leakyToolScript, secretForms } from '../helpers/secret-forms.ts';

/**
 * A public agent that declares required_secrets runs on its caller's own secrets,
 * and whatever its code writes reaches its author's logs. Redaction cannot be the boundary (a value
 * reversed, spaced, base32'd or listed as characters passes it): what a stranger's call produced is
 * the caller's, and the author reads of it only its outline (docs/logs.md, "Whose lines").
 */
type Logs = { logs: { message: string; level: string; request_id: string | null }[] };

const AUTHOR_SECRET = 'author-own-value-0123456789';
const CALLER_SECRET = 'caller-own-value-9876543210';

describe("an agent's author reads none of a stranger's call's output in its logs", () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let author: { key: string; ws: string };
  let caller: { key: string; ws: string };

  const logText = async (id: string) => {
    const res = await p.request<Logs>('GET', `/agents/${id}/logs?limit=500`, { key: author.key });
    assert.equal(res.status, 200, res.text);
    return res.body.logs.map((l) => l.message).join('\n');
  };
  const publish = async (manifest: Record<string, unknown>, bundle?: Buffer) => {
    const res = await p.request<{ id: string }>('POST', '/agents', {
      key: author.key,
      body: { is_public: true, required_secrets: ['API_TOKEN'], ...manifest },
    });
    assert.equal(res.status, 201, res.text);
    if (bundle) {
      const up = await p.request('POST', `/agents/${res.body.id}/upload`, {
        key: author.key,
        rawBody: bundle,
        headers: { 'content-type': 'application/gzip' },
      });
      assert.equal(up.status, 200, up.text);
    }
    return res.body.id;
  };

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform(
      {
        ANTHROPIC_API_KEY: 'sk-ant-test',
        ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
      },
      'sqlite',
      {},
      { inMemory: true },
    );
    const a = await createAccount(p.deps, { org: 'authorco', tier: 'pro' });
    const c = await createAccount(p.deps, { org: 'callerco', tier: 'pro' });
    author = { key: a.api_key, ws: a.workspace_id };
    caller = { key: c.api_key, ws: c.workspace_id };
    for (const [who, value] of [
      [author, AUTHOR_SECRET],
      [caller, CALLER_SECRET],
    ] as const) {
      const put = await p.request('PUT', `/workspaces/${who.ws}/secrets`, {
        key: who.key,
        body: { name: 'API_TOKEN', value },
      });
      assert.equal(put.status, 200, put.text);
    }
  });
  beforeEach(() => fake.reset());
  after(async () => {
    await p.close();
    await fake.close();
  });

  it("a public tool's stderr: the author sees the exit status and its size, the caller its error, as before", async () => {
    const id = await publish(
      {
        name: 'leaky',
        type: 'tool',
        description: 'Writes its secret to stderr in forms redaction cannot know',
        supported_providers: ['any'],
        runtime: { command: 'node main.mjs' },
      },
      await bundleOf({ 'main.mjs': leakyToolScript('API_TOKEN') }),
    );
    const failed = await p.request('POST', '/authorco/leaky/v1/run', {
      key: caller.key,
      body: { fail: true },
    });
    assert.equal(failed.status, 500, failed.text);
    assert.equal(errorOf(failed).code, 'INTERNAL_ERROR');
    assert.match(
      errorOf(failed).message,
      /exited with status 3/,
      "the caller's answer says how its call ended",
    );
    const ok = await p.request('POST', '/authorco/leaky/v1/run', { key: caller.key, body: {} });
    assert.equal(ok.status, 200, ok.text);

    const text = await logText(id);
    for (const [name, form] of Object.entries(secretForms(CALLER_SECRET))) {
      assert.ok(!text.includes(form), `the caller's value, ${name}, reached the author's logs:\n${text}`);
    }
    assert.ok(!text.includes('output-of-the-call'), "nothing the caller's call wrote reaches the author");
    // What the author does see: how each call ended, its exit status, how much it wrote.
    assert.match(text, /call req_\S+ failed with INTERNAL_ERROR after \d+ ms/);
    assert.match(
      text,
      /^command exited with status 3; stderr tail: \d+ bytes \(the caller's output, not shown\)$/m,
    );
    assert.match(text, /^stderr tail: \d+ bytes \(the caller's output, not shown\)$/m);

    // The author's own call runs on the author's vault: its output is the author's to read.
    const own = await p.request('POST', '/authorco/leaky/v1/run', { key: author.key, body: { fail: true } });
    assert.equal(own.status, 500, own.text);
    // (So the forms the test looks for are the very ones the tool writes.)
    const afterOwn = await logText(id);
    for (const [name, form] of Object.entries(secretForms(AUTHOR_SECRET))) {
      assert.ok(afterOwn.includes(form), `an own call's stderr is shown whole, ${name} included`);
    }
    assert.match(afterOwn, /output-of-the-call/);
  });

  it("a public loop's tool arguments and its provider's text: the author sees the tool, its outcome and time", async () => {
    const id = await publish({
      name: 'loopy',
      type: 'agent',
      description: 'A loop with bash',
      supported_providers: ['anthropic'],
      loop: { max_turns: 5, secrets_in_sandbox: true },
      prompt_template: 'Go.',
    });
    const reversed = secretForms(CALLER_SECRET).reversed;
    fake.enqueue(
      { toolCalls: [{ name: 'bash', input: { command: `echo caller-data-xyz; printenv API_TOKEN | rev` } }] },
      // A command named by what the model read: its first word is the caller's too.
      { toolCalls: [{ name: 'bash', input: { command: `${reversed} --anything` } }] },
      { toolCalls: [{ name: 'write_file', input: { path: 'caller-file-name.txt', content: 'x' } }] },
      { status: 400, errorMessage: `the caller's prompt was: caller-prompt-xyz ${reversed}` },
    );
    const res = await p.request('POST', '/authorco/loopy/v1/run', { key: caller.key, body: {} });
    assert.equal(res.status, 502, res.text);
    assert.equal(errorOf(res).code, 'LLM_ERROR');
    assert.ok(
      String(fake.calls[1]?.toolResults?.[0]?.content).includes(reversed),
      'the caller’s own value was in its own sandbox (the loop opted in)',
    );
    // The author reads the call's trace whole: its commands' spans name no program of the caller's.
    const requestId = (res.body as { metadata: { request_id: string } }).metadata.request_id;
    const trace = await p.request('GET', `/agents/${id}/calls/${requestId}/trace`, { key: author.key });
    assert.equal(trace.status, 200, trace.text);
    assert.ok(!trace.text.includes(reversed), `the author's trace names the caller's word: ${trace.text}`);
    assert.ok(!trace.text.includes('printenv'), trace.text);
    assert.match(trace.text, /"name":"exec"/);

    const text = await logText(id);
    for (const leaked of ['caller-data-xyz', 'printenv', 'caller-file-name', 'caller-prompt-xyz', reversed]) {
      assert.ok(!text.includes(leaked), `${leaked} reached the author's logs:\n${text}`);
    }
    assert.match(text, /^bash → exit code 0 in \d+ ms$/m);
    assert.match(text, /^write_file → 1 bytes$/m);
    assert.match(text, /^provider error \(anthropic, HTTP 400, api_error\)$/m);
  });

  it('a line written before the change, which says nothing of whose call it was, shows only its size', async () => {
    const id = await publish({
      name: 'older',
      type: 'tool',
      description: 'Has lines from an earlier build',
      supported_providers: ['any'],
      runtime: { command: 'cat' },
    });
    const at = p.clock.now().toISOString();
    const ttl = Math.floor(Date.now() / 1000) + 86_400;
    const requestId = `req_${randomUUID()}`;
    await p.deps.store.put({
      ...agentKeys.version(id),
      sk: `LOG#${at}#01#${randomUUID()}`,
      timestamp: at,
      level: 'error',
      message: `command exited with status 1; stderr tail: ${secretForms(CALLER_SECRET).reversed}`,
      request_id: requestId,
      ttl,
    });
    await p.deps.store.put({
      ...agentKeys.version(id),
      sk: `LOG#${at}#${requestId}`,
      timestamp: at,
      level: 'error',
      message: `call ${requestId} failed with INTERNAL_ERROR after 12 ms`,
      request_id: requestId,
      ttl,
    });
    // An earlier build keyed a call's own line by a random id: it begins with its request id.
    const earlierId = `req_${randomUUID()}`;
    await p.deps.store.put({
      ...agentKeys.version(id),
      sk: `LOG#${at}#${randomUUID()}`,
      timestamp: at,
      level: 'info',
      message: `call ${earlierId} succeeded in 7 ms (2 ms of compute)`,
      request_id: earlierId,
      ttl,
    });
    const text = await logText(id);
    assert.match(text, /call req_\S+ succeeded in 7 ms \(2 ms of compute\)/);
    assert.ok(!text.includes(secretForms(CALLER_SECRET).reversed), text);
    assert.match(
      text,
      /\[\d+ bytes written before a call's output was kept from other accounts, not shown\]/,
    );
    assert.match(text, /call req_\S+ failed with INTERNAL_ERROR after 12 ms/, "the call's own line is shown");
  });
});
