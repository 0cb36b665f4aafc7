import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { incrementDailyCalls } from '../../functions/core/usage/daily-usage.ts';
import { bundleOf } from '../helpers/bundles.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/**
 * What a call counts, as a caller sees it over HTTP: a sandboxed call counts 1
 * against the daily calls (X-RateLimit-Remaining drops, GET /usage agrees) as well as 1 against
 * the sandbox runs; a call refused for its input counts against neither; a run stopped at its
 * deadline records the compute it used.
 */

type Usage = {
  totals: { calls: number; errors: number };
  quota: { used: number; remaining: number };
  sandbox_quota: { used: number };
};
type Compute = { sandbox_calls: number; compute_ms: number };

const readStdin =
  "const chunks = []; for await (const c of process.stdin) chunks.push(c); const input = JSON.parse(Buffer.concat(chunks).toString() || '{}');";

describe('what a call counts against the quotas and in usage', () => {
  let p: TestPlatform;
  let caller: { key: string; accountId: string };

  const publishTool = async (name: string, script: string, extra: Record<string, unknown> = {}) => {
    const res = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      key: caller.key,
      body: {
        name,
        type: 'tool',
        description: `${name} tool`,
        supported_providers: ['any'],
        runtime: { command: 'node main.mjs' },
        ...extra,
      },
    });
    assert.equal(res.status, 201, res.text);
    const up = await p.request('POST', `/agents/${res.body.id}/upload`, {
      key: caller.key,
      rawBody: await bundleOf({ 'main.mjs': script }),
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(up.status, 200, up.text);
  };
  /** Today's quotas and the usage totals, as GET /usage (and the dashboard, which reads it) shows them. */
  const usage = async () => {
    const res = await p.request<Usage>('GET', '/usage', { key: caller.key });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-ratelimit-remaining'), String(res.body.quota.remaining));
    return {
      calls: res.body.totals.calls,
      errors: res.body.totals.errors,
      dailyCalls: res.body.quota.used,
      sandboxRuns: res.body.sandbox_quota.used,
      remaining: res.body.quota.remaining,
    };
  };
  const compute = async (agent: string) => {
    const res = await p.request<Compute>('GET', `/usage/compute?agent=${agent}`, { key: caller.key });
    assert.equal(res.status, 200, res.text);
    return res.body;
  };

  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
    caller = await p.createAccount('countco', 'pro');
    await publishTool('adder', `${readStdin} console.log(JSON.stringify({ sum: input.a + input.b }));`, {
      input_schema: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
      },
    });
    // Waits on a timer (no CPU spent on a shared machine) far past its 3 s timeout.
    await publishTool('sleeper', 'setTimeout(() => {}, 60_000);', { timeout_seconds: 3 });
    const prompt = await p.request('POST', '/agents', {
      key: caller.key,
      body: {
        name: 'greet',
        description: 'Greets.',
        supported_providers: ['any'],
        prompt_template: 'Say hello to {{who}}',
      },
    });
    assert.equal(prompt.status, 201, prompt.text);
  });
  after(() => p?.close());

  it('counts a sandboxed call 1 against the daily calls and 1 against the sandbox runs', async () => {
    const before = await usage();
    const computeBefore = await compute('countco/adder');
    const res = await p.request('POST', '/countco/adder/v1/run', { key: caller.key, body: { a: 2, b: 3 } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-ratelimit-remaining'), String(before.remaining - 1));
    const after = await usage();
    assert.deepEqual(
      [after.dailyCalls, after.sandboxRuns, after.calls, after.remaining],
      [before.dailyCalls + 1, before.sandboxRuns + 1, before.calls + 1, before.remaining - 1],
    );
    assert.equal((await compute('countco/adder')).sandbox_calls, computeBefore.sandbox_calls + 1);
  });

  it('counts a call refused for its input against neither quota (schema or prompt placeholder)', async () => {
    const before = await usage();
    const bad = await p.request('POST', '/countco/adder/v1/run', { key: caller.key, body: { a: 'two' } });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(errorOf(bad).code, 'INVALID_INPUT');
    assert.deepEqual(errorOf(bad).fields.sort(), ['body.a', 'body.b']);
    assert.equal(bad.headers.get('x-ratelimit-remaining'), String(before.remaining));
    const hole = await p.request('POST', '/countco/greet/v1/run', { key: caller.key, body: {} });
    assert.equal(hole.status, 400, hole.text);
    assert.deepEqual(errorOf(hole).fields, ['body.who']);
    assert.equal(hole.headers.get('x-ratelimit-remaining'), String(before.remaining));
    const after = await usage();
    assert.deepEqual(
      [after.dailyCalls, after.sandboxRuns, after.remaining],
      [before.dailyCalls, before.sandboxRuns, before.remaining],
    );
    // Still recorded, as every call to a known agent is: usage shows the two refusals as errors.
    assert.deepEqual([after.calls, after.errors], [before.calls + 2, before.errors + 2]);
  });

  it('records the compute of a run stopped at its deadline', async () => {
    const res = await p.request<{ metadata: { request_id: string } }>('POST', '/countco/sleeper/v1/run', {
      key: caller.key,
      body: {},
    });
    assert.equal(res.status, 504, res.text);
    assert.equal(errorOf(res).code, 'TIMEOUT');
    const used = await compute('countco/sleeper');
    assert.equal(used.sandbox_calls, 1, JSON.stringify(used));
    // It ran until the call's 3 s timeout, less the time the sandbox took to start it.
    assert.ok(used.compute_ms >= 250 && used.compute_ms <= 4_000, JSON.stringify(used));
  });

  it('refuses a sandboxed call with 429 once the daily calls are used up, with sandbox runs left', async () => {
    const before = await usage();
    await incrementDailyCalls(p.deps, caller.accountId, before.remaining);
    const res = await p.request('POST', '/countco/adder/v1/run', { key: caller.key, body: { a: 1, b: 1 } });
    assert.equal(res.status, 429, res.text);
    assert.match(errorOf(res).message, /Daily quota of 10000 calls/);
    assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
    assert.equal((await usage()).sandboxRuns, before.sandboxRuns, 'no sandbox run was counted');
  });
});
