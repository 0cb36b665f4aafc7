import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packDirectory } from '../../functions/cli/pack.ts';
import { INLINE_OUTPUT_BYTES, OUTPUT_AS_URL } from '../../functions/core/payloads/output-answer.ts';
import { DEPLOYMENTS, type Deployment, startDeployment } from '../helpers/deployment.ts';

/**
 * Large values on both deployments (issue 33, problems 2 and 3): a schedule run with a ~600 KB
 * output (trigger, and a webhook with an idempotency key and its retry) is answered, listed with
 * the same bytes and never called interrupted; a tool output of quotes too large for a Lambda
 * response is answered with a download URL serving its exact JSON; one just under the bound inline.
 * A tool prints `ch` repeated `n` times as {"text": …}.
 */

type Run = { run_id: string; status: string; output: Record<string, unknown> | null; error: string | null };
type Link = { output_url: string; output_bytes: number; expires_at: string };
type Envelope = { data: Record<string, unknown>; warnings: { code: string }[] };

const digest = (text: string | undefined) =>
  text === undefined ? 'undefined' : `${text.length}:${createHash('sha256').update(text).digest('hex')}`;
const sameText = (actual: string | undefined, expected: string, message?: string) =>
  assert.equal(digest(actual), digest(expected), message);
/** What Lambda counts for an answer's JSON: the body escaped once more as a string. */
const lambdaBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(JSON.stringify(value))) - 2;

const TOOL = `const chunks = []; for await (const c of process.stdin) chunks.push(c);
const input = JSON.parse(Buffer.concat(chunks).toString() || '{}');
process.stdout.write(JSON.stringify({ text: String(input.ch ?? 'x').repeat(Number(input.n ?? 1)) }));`;

async function bundleOf(files: Record<string, string>): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'agenthost-e2e-bundle-'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  const { data } = await packDirectory(dir);
  await rm(dir, { recursive: true, force: true });
  return data;
}

for (const kind of DEPLOYMENTS) {
  describe(`large values: stored apart, answered inline or by URL (${kind} deployment)`, () => {
    let d: Deployment;
    let ws: string;

    before(async () => {
      d = await startDeployment(kind);
      const list = await d.request<{ workspaces: { id: string; slug: string }[] }>('GET', '/workspaces');
      ws = list.body.workspaces.find((w) => w.slug === 'local')?.id as string;
      const res = await d.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
        body: {
          name: 'repeater',
          type: 'tool',
          description: 'Repeats a character.',
          supported_providers: ['any'],
          runtime: { command: 'node main.mjs' },
          required_secrets: [],
          timeout_seconds: 25,
        },
      });
      assert.equal(res.status, 201, res.text);
      const up = await d.request('POST', `/agents/${res.body.id}/upload`, {
        rawBody: await bundleOf({ 'main.mjs': TOOL }),
        headers: { 'content-type': 'application/gzip' },
      });
      assert.equal(up.status, 200, up.text);
    });
    after(async () => {
      await d?.close();
    });

    const schedule = async (type: 'webhook' | 'cron', input: Record<string, unknown>) => {
      const res = await d.request<{ id: string; webhook_url?: string }>(
        'POST',
        `/workspaces/${ws}/schedules`,
        {
          body: {
            agent: 'local/repeater',
            type,
            input_data: input,
            ...(type === 'cron' ? { cron_expression: '0 3 * * *' } : {}),
          },
        },
      );
      assert.equal(res.status, 201, res.text);
      return res.body;
    };
    const runs = async (id: string) =>
      (await d.request<{ runs: Run[] }>('GET', `/workspaces/${ws}/schedules/${id}/runs`)).body.runs;
    const events = async (id: string) =>
      (await d.request<{ events: { type: string }[] }>('GET', `/workspaces/${ws}/schedules/${id}/events`))
        .body.events;
    const call = (input: Record<string, unknown>) =>
      d.request<Envelope>('POST', '/local/repeater/v1/run', { body: input });

    // 600 KB as DynamoDB counts a string (UTF-8: € is 3 bytes), 750 KB as JSON: over the 400 KB
    // item limit, under the inline bound.
    const big = { ch: '€"', n: 150_000 };
    const bigOutput = JSON.stringify({ text: '€"'.repeat(150_000) });

    it('triggers a run with a ~600 KB output: answered, listed with the same bytes, never interrupted', async () => {
      const s = await schedule('cron', big);
      const res = await d.request<Run>('POST', `/workspaces/${ws}/schedules/${s.id}/trigger`, { body: {} });
      assert.equal(res.status, 200, `${res.text.slice(0, 500)}\n${d.output().slice(-2000)}`);
      assert.equal(res.body.status, 'success', res.body.error ?? '');
      sameText(JSON.stringify(res.body.output), bigOutput);
      const listed = await runs(s.id);
      assert.equal(listed.length, 1, 'the run is in the history');
      assert.equal(listed[0]?.run_id, res.body.run_id);
      sameText(JSON.stringify(listed[0]?.output), bigOutput, 'the same output bytes');
      assert.ok(!(await events(s.id)).some((e) => e.type === 'interrupted'));
    });

    it('answers a webhook with an idempotency key and its retry with the same ~600 KB output', async () => {
      const s = await schedule('webhook', big);
      const path = new URL(s.webhook_url as string).pathname;
      const headers = { 'idempotency-key': `big-${kind}` };
      const first = await d.request<Run>('POST', path, { key: null, headers });
      assert.equal(first.status, 200, first.text.slice(0, 500));
      sameText(JSON.stringify(first.body.output), bigOutput);
      const started = Date.now();
      const retry = await d.request<Run & { deduplicated: boolean }>('POST', path, { key: null, headers });
      assert.equal(retry.status, 200, retry.text.slice(0, 500));
      assert.ok(Date.now() - started < 10_000, 'the retry answers at once');
      assert.equal(retry.body.deduplicated, true);
      assert.equal(retry.body.run_id, first.body.run_id);
      sameText(JSON.stringify(retry.body.output), bigOutput);
      const listed = await runs(s.id);
      assert.equal(listed.length, 1);
      sameText(JSON.stringify(listed[0]?.output), bigOutput);
    });

    it('answers a 3.9 MB tool output of quotes with a download URL serving its exact JSON', async () => {
      const res = await call({ ch: '"', n: 1_950_000 });
      assert.equal(res.status, 200, `${res.text.slice(0, 500)}\n${d.output().slice(-2000)}`);
      assert.deepEqual(
        res.body.warnings.map((w) => w.code),
        [OUTPUT_AS_URL],
      );
      const link = res.body.data as unknown as Link;
      const expected = JSON.stringify({ text: '"'.repeat(1_950_000) });
      assert.equal(link.output_bytes, Buffer.byteLength(expected));
      const got = await fetch(link.output_url);
      assert.equal(got.status, 200);
      sameText(await got.text(), expected, 'the URL serves the exact output');
      assert.ok(Date.parse(link.expires_at) > Date.now());
    });

    it('answers an output just under the inline bound inline', async () => {
      const n = Math.floor((INLINE_OUTPUT_BYTES - lambdaBytes({ text: '' })) / 4);
      assert.ok(lambdaBytes({ text: '"'.repeat(n) }) <= INLINE_OUTPUT_BYTES);
      assert.ok(lambdaBytes({ text: '"'.repeat(n + 1) }) > INLINE_OUTPUT_BYTES);
      const inline = await call({ ch: '"', n });
      assert.equal(inline.status, 200, `${inline.text.slice(0, 500)}\n${d.output().slice(-2000)}`);
      assert.deepEqual(inline.body.warnings, []);
      sameText(inline.body.data.text as string, '"'.repeat(n));
      const linked = await call({ ch: '"', n: n + 1 });
      assert.equal(linked.status, 200, linked.text.slice(0, 500));
      assert.equal(typeof linked.body.data.output_url, 'string');
    });
  });
}
