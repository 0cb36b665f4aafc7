import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { INLINE_OUTPUT_BYTES, OUTPUT_AS_URL } from '../../functions/core/payloads/output-answer.ts';
import { ITEM_PAYLOAD_BYTES } from '../../functions/core/payloads/payload-store.ts';
import { HISTORY_DAYS } from '../../functions/core/schedules/schedule-events.ts';
import { reconcileInterruptedRuns } from '../../functions/core/schedules/schedule-run-inflight.ts';
import { UNRECORDED_OUTPUT_ERROR } from '../../functions/core/schedules/schedule-run-recording.ts';
import { runHousekeeping } from '../../functions/jobs/housekeeping.ts';
import { queryAll, type TransactOp } from '../../functions/ports/store.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { lambdaBytes, sameText } from '../helpers/large-values.ts';
import { BACKENDS, type TestPlatform } from '../helpers/platform.ts';
import { startRunsPlatform } from '../helpers/schedules.ts';

/**
 * Large values (docs/limits.md) on both stores, through the local server: a run's
 * output over 64 KiB is stored in the bundle store behind a reference in its record, read back by
 * the routes, and swept with the record; a run's record and its in-flight marker never fail apart;
 * an output too large to answer inline is answered with a download URL the local server serves
 * (403 once expired), and one just under the bound inline.
 */

type Run = {
  run_id: string;
  status: string;
  output: Record<string, unknown> | null;
  error: string | null;
  deduplicated: boolean;
  output_as_url?: boolean;
};
type Link = { output_url: string; output_bytes: number; output_sha256: string; expires_at: string };

/** About 600 KB of JSON, with multi-byte characters and quotes so bytes and characters differ. */
const bigText = (seed: string) => `${seed} "€" `.repeat(Math.ceil(600_000 / (seed.length + 7)));

for (const backend of BACKENDS) {
  describe(`large values: stored apart, answered inline or by URL (${backend} store)`, () => {
    let p: TestPlatform;
    let fake: FakeLlmProviders;
    let owner: { key: string; ws: string };
    const base = () => `/workspaces/${owner.ws}/schedules`;

    before(async () => {
      fake = await startFakeLlm();
      p = await startRunsPlatform(fake, backend);
      const o = await createAccount(p.deps, { org: 'bigco', tier: 'pro' });
      owner = { key: o.api_key, ws: o.workspace_id };
      const published = await p.request('POST', '/agents', {
        key: owner.key,
        body: {
          name: 'writer',
          description: 'Writes a lot.',
          supported_providers: ['anthropic'],
          prompt_template: 'Write about {{topic}}',
          timeout_seconds: 60,
        },
      });
      assert.equal(published.status, 201, published.text);
    });
    after(async () => {
      await p.close();
      await fake.close();
    });
    beforeEach(() => fake.reset());

    const schedule = async (type: 'webhook' | 'cron' = 'webhook') => {
      const res = await p.request<{ id: string; webhook_url?: string }>('POST', base(), {
        key: owner.key,
        body: {
          agent: 'bigco/writer',
          type,
          input_data: { topic: 'sea' },
          ...(type === 'cron' ? { cron_expression: '0 3 * * *' } : {}),
        },
      });
      assert.equal(res.status, 201, res.text);
      return res.body;
    };
    const runs = async (id: string) =>
      (await p.request<{ runs: Run[] }>('GET', `${base()}/${id}/runs`, { key: owner.key })).body.runs;
    const storedRuns = (id: string) => queryAll(p.deps.store, { pk: `SCHEDULE#${id}#RUNS` });
    const markers = async (id: string) =>
      (await queryAll(p.deps.store, { pk: `SCHEDULE#${id}`, sk: { beginsWith: 'INFLIGHT#' } })).length;

    it('stores a ~600 KB run output apart, lists it whole, and never calls the run interrupted', async () => {
      const text = bigText('trigger');
      fake.enqueue({ text });
      const s = await schedule('cron');
      const res = await p.request<Run>('POST', `${base()}/${s.id}/trigger`, { key: owner.key, body: {} });
      assert.equal(res.status, 200, res.text.slice(0, 500));
      assert.equal(res.body.status, 'success');
      sameText(res.body.output?.text as string, text);

      const listed = await runs(s.id);
      assert.equal(listed.length, 1, 'the run is in the history');
      sameText(JSON.stringify(listed[0]?.output), JSON.stringify({ text }), 'the same output bytes');
      assert.equal(
        (listed[0] as Record<string, unknown>).output_ref,
        undefined,
        'the reference is not answered',
      );

      const [item] = await storedRuns(s.id);
      assert.ok(item);
      assert.ok(
        Buffer.byteLength(JSON.stringify(item)) < ITEM_PAYLOAD_BYTES,
        'the record itself stays small',
      );
      const ref = item.output_ref as { key: string; bytes: number };
      assert.equal(ref.bytes, Buffer.byteLength(JSON.stringify({ text })));
      sameText((await p.deps.bundles.get(ref.key))?.toString(), JSON.stringify({ text }));

      assert.equal(await markers(s.id), 0, 'the in-flight marker went with the record');
      assert.equal((await reconcileInterruptedRuns(p.deps, { all: true })).interrupted, 0);
      assert.equal((await runs(s.id)).length, 1);
    });

    it('answers a webhook retry with the same idempotency key with the same large output, at once', async () => {
      const text = bigText('webhook');
      fake.enqueue({ text });
      const s = await schedule('webhook');
      const path = new URL(s.webhook_url as string).pathname;
      const headers = { 'idempotency-key': 'big-1' };
      const first = await p.request<Run>('POST', path, { key: null, body: { topic: 'hills' }, headers });
      assert.equal(first.status, 200, first.text.slice(0, 500));
      sameText(first.body.output?.text as string, text);
      const started = Date.now();
      const retry = await p.request<Run>('POST', path, { key: null, body: { topic: 'hills' }, headers });
      assert.equal(retry.status, 200, retry.text.slice(0, 500));
      assert.ok(Date.now() - started < 10_000, 'the retry does not wait for a lease');
      assert.equal(retry.body.deduplicated, true);
      assert.equal(retry.body.run_id, first.body.run_id);
      sameText(JSON.stringify(retry.body.output), JSON.stringify(first.body.output));
      assert.equal(fake.calls.length, 1, 'the agent ran once');
      assert.equal((await runs(s.id)).length, 1);
    });

    it('records a run whose record cannot be written as an error, in place of its marker', async () => {
      fake.enqueue({ text: 'a fine answer' });
      const s = await schedule('cron');
      const store = p.deps.store;
      const original = store.transactWrite.bind(store);
      let refused = 0;
      store.transactWrite = async (ops: TransactOp[]) => {
        const record = ops.find((op) => 'put' in op && String(op.put.pk).endsWith('#RUNS'));
        if (record && 'put' in record && record.put.status === 'success' && refused++ === 0) {
          throw new Error('simulated store failure');
        }
        return original(ops);
      };
      try {
        const res = await p.request<Run>('POST', `${base()}/${s.id}/trigger`, { key: owner.key, body: {} });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.status, 'error', 'the caller is not told success');
        assert.equal(res.body.error, UNRECORDED_OUTPUT_ERROR);
      } finally {
        store.transactWrite = original;
      }
      const listed = await runs(s.id);
      assert.equal(listed.length, 1);
      assert.equal(listed[0]?.error, UNRECORDED_OUTPUT_ERROR, 'the history says what the caller was told');
      assert.equal(await markers(s.id), 0);
      assert.equal((await reconcileInterruptedRuns(p.deps, { all: true })).interrupted, 0);
    });

    it('answers a call output too large to answer inline with a download URL serving its exact JSON', async () => {
      const text = '"'.repeat(3_900_000);
      fake.enqueue({ text });
      const res = await p.request<{ data: Link; warnings: { code: string }[] }>(
        'POST',
        '/bigco/writer/v1/run',
        {
          key: owner.key,
          body: { topic: 'quotes' },
        },
      );
      assert.equal(res.status, 200, res.text.slice(0, 500));
      assert.deepEqual(
        res.body.warnings.map((w) => w.code),
        [OUTPUT_AS_URL],
      );
      const link = res.body.data;
      const expected = JSON.stringify({ text });
      assert.equal(link.output_bytes, Buffer.byteLength(expected));
      const got = await fetch(link.output_url);
      assert.equal(got.status, 200);
      sameText(await got.text(), expected, 'the URL serves the exact output');
      assert.ok(Date.parse(link.expires_at) > p.clock.now().getTime());

      // Past its expiry the URL is refused (as S3 refuses an expired presigned URL), and housekeeping
      // deletes the stored output.
      p.clock.advance(Date.parse(link.expires_at) - p.clock.now().getTime() + 1000);
      assert.equal((await fetch(link.output_url)).status, 403);
      const tampered = link.output_url.replace(/signature=[^&]+/, 'signature=AAAA');
      assert.equal((await fetch(tampered)).status, 403);
      assert.ok((await runHousekeeping(p.deps)).swept >= 1);
      assert.equal((await fetch(link.output_url)).status, 403);
      const stored = await queryAll(p.deps.store, { index: 'gsi2', pk: 'PAYLOADS#DUE' });
      assert.ok(
        stored.every((item) => !String(item.key).includes('call-outputs')),
        'no call output is left to sweep',
      );
    });

    it('answers an output just under the inline bound inline, and one byte more by URL', async () => {
      // Quotes cost 4 bytes each in the Lambda response (\" escaped again), the rest of {"text":"…"} 15.
      const under = '"'.repeat(Math.floor((INLINE_OUTPUT_BYTES - lambdaBytes({ text: '' })) / 4));
      assert.ok(lambdaBytes({ text: under }) <= INLINE_OUTPUT_BYTES);
      assert.ok(lambdaBytes({ text: `${under}""` }) > INLINE_OUTPUT_BYTES);
      fake.enqueue({ text: under });
      fake.enqueue({ text: `${under}""` });
      const call = () =>
        p.request<{ data: Record<string, unknown>; warnings: { code: string }[] }>(
          'POST',
          '/bigco/writer/v1/run',
          { key: owner.key, body: { topic: 'edge' } },
        );
      const inline = await call();
      assert.equal(inline.status, 200);
      sameText(inline.body.data.text as string, under);
      assert.deepEqual(inline.body.warnings, []);
      const linked = await call();
      assert.equal(linked.status, 200);
      assert.equal(typeof linked.body.data.output_url, 'string');
    });

    it('answers a run output too large to answer inline by URL, in the trigger and in the history', async () => {
      const text = '"'.repeat(3_900_000);
      fake.enqueue({ text });
      const s = await schedule('cron');
      const res = await p.request<Run>('POST', `${base()}/${s.id}/trigger`, { key: owner.key, body: {} });
      assert.equal(res.status, 200, res.text.slice(0, 500));
      assert.equal(res.body.output_as_url, true, res.text.slice(0, 500));
      const link = res.body.output as unknown as Link;
      sameText(await (await fetch(link.output_url)).text(), JSON.stringify({ text }));
      const [listed] = await runs(s.id);
      assert.equal(listed?.output_as_url, true);
      const again = listed?.output as unknown as Link;
      sameText(await (await fetch(again.output_url)).text(), JSON.stringify({ text }));
    });

    it('deletes a run’s stored output when its record expires', async () => {
      fake.enqueue({ text: bigText('expiry') });
      const s = await schedule('cron');
      const res = await p.request<Run>('POST', `${base()}/${s.id}/trigger`, { key: owner.key, body: {} });
      assert.equal(res.status, 200);
      const [item] = await storedRuns(s.id);
      const ref = item?.output_ref as { key: string };
      await runHousekeeping(p.deps);
      assert.ok(await p.deps.bundles.get(ref.key), 'kept while its record is');
      p.clock.advance((HISTORY_DAYS * 86_400 + 60) * 1000);
      await runHousekeeping(p.deps);
      assert.equal(await p.deps.bundles.get(ref.key), undefined, 'deleted with its record');
    });
  });
}
