import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { BACKENDS_WITH_FAULTS, errorOf, type TestPlatform } from '../helpers/platform.ts';
import { startRunsPlatform } from '../helpers/schedules.ts';

type Run = {
  run_id: string;
  status: string;
  output: Record<string, unknown> | null;
  error: string | null;
  deduplicated: boolean;
};

for (const backend of BACKENDS_WITH_FAULTS) {
  describe(`webhook trigger: POST /webhooks/{schedule_id}/{webhook_secret} (${backend} store)`, () => {
    let p: TestPlatform;
    let fake: FakeLlmProviders;
    let owner: { key: string; ws: string };
    let hook: { id: string; url: string; path: string };
    let agentId: string;

    const post = (path: string, body?: string, headers: Record<string, string> = {}) =>
      p.request<Run>('POST', path, {
        key: null,
        ...(body === undefined ? {} : { rawBody: body }),
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      });

    before(async () => {
      fake = await startFakeLlm();
      p = await startRunsPlatform(fake, backend, {}, { inMemory: true });
      const o = await createAccount(p.deps, { org: 'hookco', tier: 'pro' });
      owner = { key: o.api_key, ws: o.workspace_id };
      const published = await p.request<{ id: string }>('POST', '/agents', {
        key: owner.key,
        body: {
          name: 'echo',
          description: 'Echoes its input.',
          supported_providers: ['anthropic'],
        },
      });
      assert.equal(published.status, 201, published.text);
      agentId = published.body.id;
      const created = await p.request<{ id: string; webhook_url: string }>(
        'POST',
        `/workspaces/${owner.ws}/schedules`,
        {
          key: owner.key,
          body: { agent: 'hookco/echo', type: 'webhook', input_data: { source: 'default', keep: 1 } },
        },
      );
      assert.equal(created.status, 201, created.text);
      hook = {
        id: created.body.id,
        url: created.body.webhook_url,
        path: new URL(created.body.webhook_url, 'http://x').pathname,
      };
    });
    after(async () => {
      await p.close();
      await fake.close();
    });
    beforeEach(() => fake.reset());

    /** The input the agent received (without a prompt template, the prompt is the input's JSON). */
    const seenInput = () => JSON.parse(String(fake.calls.at(-1)?.prompt));

    it('needs no API key: the secret in the URL is the credential; the answer is the Run object', async () => {
      fake.enqueue({ text: 'ran' });
      const res = await post(hook.path, '{"source":"github","event":"push"}');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.status, 'success');
      assert.deepEqual(res.body.output, { text: 'ran' });
      assert.equal(res.body.deduplicated, false);
      assert.match(res.body.run_id, /^[0-9a-f-]{36}$/);
      assert.deepEqual(
        seenInput(),
        { source: 'github', keep: 1, event: 'push' },
        'body keys win over input_data',
      );
    });

    it('starts a trace of its own for each run, whatever traceparent the sender sends (docs/traces.md)', async () => {
      fake.enqueue({ text: 'one' }, { text: 'two' });
      const sent = `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`;
      const runs = [await post(hook.path, '{}', { traceparent: sent }), await post(hook.path, '{}')];
      const traces = [];
      for (const run of runs) {
        assert.equal(run.status, 200, run.text);
        const trace = await p.request<{
          trace_id: string;
          spans: { name: string; parent_span_id: string | null }[];
        }>('GET', `/agents/${agentId}/calls/run_${run.body.run_id}/trace`, { key: owner.key });
        assert.equal(trace.status, 200, trace.text);
        const root = trace.body.spans.find((s) => s.name === 'call hookco/echo/v1');
        assert.equal(root?.parent_span_id, null, 'the root of its own trace');
        traces.push(trace.body.trace_id);
      }
      assert.notEqual(traces[0], 'ab'.repeat(16));
      assert.notEqual(traces[0], traces[1]);
    });

    it('wraps a non-object body as {data: value}, and uses input_data alone without a body', async () => {
      fake.enqueue({ text: 'a' }, { text: 'b' }, { text: 'c' });
      await post(hook.path, '[1,2,3]');
      assert.deepEqual(seenInput(), { source: 'default', keep: 1, data: [1, 2, 3] });
      await post(hook.path, '"just text"');
      assert.deepEqual(seenInput(), { source: 'default', keep: 1, data: 'just text' });
      await post(hook.path);
      assert.deepEqual(seenInput(), { source: 'default', keep: 1 });
      const bad = await post(hook.path, '{not json');
      assert.equal(bad.status, 400);
      assert.deepEqual(errorOf(bad).fields, ['body']);
    });

    it('answers a wrong secret, an unknown schedule and a cron schedule’s id alike: 404, nothing run', async () => {
      const secret = hook.path.split('/').pop() as string;
      const cron = await p.request<{ id: string }>('POST', `/workspaces/${owner.ws}/schedules`, {
        key: owner.key,
        body: { agent: 'hookco/echo', cron_expression: '0 0 * * *' },
      });
      const answers = [
        await post(`/webhooks/${hook.id}/whs_${'A'.repeat(43)}`, '{}'),
        await post(`/webhooks/${hook.id}/${secret.slice(0, -1)}x`, '{}'),
        await post(`/webhooks/00000000-0000-4000-8000-000000000000/${secret}`, '{}'),
        await post(`/webhooks/${cron.body.id}/${secret}`, '{}'),
        await post(`/webhooks/not-a-uuid/${secret}`, '{}'),
      ];
      for (const res of answers) {
        assert.equal(res.status, 404, res.text);
        const e = errorOf(res);
        assert.deepEqual([e.code, e.message], ['NOT_FOUND', 'Webhook not found']);
      }
      assert.equal(fake.calls.length, 0);
    });

    it('runs 50 concurrent posts with one idempotency-key exactly once; the others get that run, deduplicated', async (t) => {
      fake.setResponder(() => ({ text: 'once', delayMs: 150 }));
      const results = await Promise.all(
        Array.from({ length: 50 }, () => post(hook.path, '{"n":1}', { 'idempotency-key': 'delivery-42' })),
      );
      fake.setResponder(undefined);
      for (const r of results) assert.equal(r.status, 200, r.text);
      const runIds = new Set(results.map((r) => r.body.run_id));
      const fresh = results.filter((r) => !r.body.deduplicated);
      t.diagnostic(
        `50 concurrent posts, one key: ${fake.calls.length} execution(s), ${fresh.length} fresh answer(s), ${runIds.size} run id(s)`,
      );
      assert.equal(fake.calls.length, 1, 'executed exactly once');
      assert.equal(fresh.length, 1);
      assert.equal(runIds.size, 1);
      for (const r of results) assert.deepEqual(r.body.output, { text: 'once' });
      // Later, within the window: still the first run, nothing executed.
      p.clock.advance(23 * 3600 * 1000);
      const later = await post(hook.path, '{"n":2}', { 'idempotency-key': 'delivery-42' });
      assert.equal(later.body.deduplicated, true);
      assert.equal(later.body.run_id, [...runIds][0]);
      assert.equal(fake.calls.length, 1);
      // After the 24-hour window the key is new again.
      p.clock.advance(2 * 3600 * 1000);
      fake.enqueue({ text: 'again' });
      const fresh2 = await post(hook.path, '{"n":3}', { 'idempotency-key': 'delivery-42' });
      assert.equal(fresh2.body.deduplicated, false);
      assert.notEqual(fresh2.body.run_id, later.body.run_id);
      const runs = await p.request<{ total: number }>(
        'GET',
        `/workspaces/${owner.ws}/schedules/${hook.id}/runs`,
        {
          key: owner.key,
        },
      );
      assert.ok(runs.body.total >= 2);
      const tooLong = await post(hook.path, '{}', { 'idempotency-key': 'k'.repeat(256) });
      assert.equal(tooLong.status, 400);
    });

    it('answers 409 for a disabled schedule and runs nothing', async () => {
      const off = await p.request('PATCH', `/workspaces/${owner.ws}/schedules/${hook.id}`, {
        key: owner.key,
        body: { enabled: false },
      });
      assert.equal(off.status, 200, off.text);
      const res = await post(hook.path, '{}');
      assert.equal(res.status, 409);
      assert.match(errorOf(res).message, /disabled/);
      assert.equal(fake.calls.length, 0);
      await p.request('PATCH', `/workspaces/${owner.ws}/schedules/${hook.id}`, {
        key: owner.key,
        body: { enabled: true },
      });
    });

    it('forgets the secret when the schedule is deleted', async () => {
      const created = await p.request<{ id: string; webhook_url: string }>(
        'POST',
        `/workspaces/${owner.ws}/schedules`,
        {
          key: owner.key,
          body: { agent: 'hookco/echo', type: 'webhook' },
        },
      );
      const path = new URL(created.body.webhook_url, 'http://x').pathname;
      await p.request('DELETE', `/workspaces/${owner.ws}/schedules/${created.body.id}`, { key: owner.key });
      assert.equal((await post(path, '{}')).status, 404);
    });
  });
}
