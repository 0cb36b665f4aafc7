import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, it } from 'node:test';
import { INLINE_OUTPUT_BYTES, OUTPUT_AS_URL } from '../../functions/core/payloads/output-answer.ts';
import { errorEnvelope } from '../../functions/edge/error-answer.ts';
import { eventBodyTooLarge } from '../../functions/edge/event-body-budget.ts';
import { DEFAULT_SANDBOX_LIMITS } from '../../functions/ports/sandbox.ts';
import {
  EVENT_BODY_BYTES,
  MAX_BINARY_BODY_BYTES,
  MAX_INPUT_DATA_BYTES,
  MAX_MANIFEST_BYTES,
  MAX_PROMPT_TEMPLATE_BYTES,
  MAX_SERVICE_ENV_BYTES,
  MAX_SERVICE_SETTINGS_BYTES,
  SERVICE_SECRET_BYTES,
} from '../../functions/shared/byte-limits.ts';
import { bundleOf } from '../helpers/bundles.ts';
import { type Deployment, startDeployment } from '../helpers/deployment.ts';
import { eachDeployment } from '../helpers/each-deployment.ts';
import { lambdaBytes, sameText } from '../helpers/large-values.ts';
import type { ApiResponse } from '../helpers/platform.ts';

/**
 * Large values on both deployments (docs/limits.md), each sent to `npm start` and to the emulated
 * AWS deployment with the same expectations. A 5 MB call input, a ~300 KB schedule input_data and
 * three 64 KiB secrets reach a tool whole (it prints their SHA-256). A schedule run with a ~600 KB
 * output (trigger, and a webhook with an idempotency key and its retry) is answered, listed with
 * the same bytes and never called interrupted; a tool output of quotes too large for a Lambda
 * response is answered with a download URL serving its exact JSON; one just under the bound inline.
 * A tool prints `ch` repeated `n` times as {"text": …}.
 */

type Run = { run_id: string; status: string; output: Record<string, unknown> | null; error: string | null };
type Link = { output_url: string; output_bytes: number; expires_at: string };
type Envelope = { data: Record<string, unknown>; warnings: { code: string }[] };

const TOOL = `const chunks = []; for await (const c of process.stdin) chunks.push(c);
const input = JSON.parse(Buffer.concat(chunks).toString() || '{}');
process.stdout.write(JSON.stringify({ text: String(input.ch ?? 'x').repeat(Number(input.n ?? 1)) }) + ' '.repeat(Number(input.pad ?? 0)));`;

/** Prints the SHA-256 of its input's `text`, of its files and of its three secrets, and its stdin's size. */
const HASHER = `import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
const chunks = []; for await (const c of process.stdin) chunks.push(c);
const raw = Buffer.concat(chunks);
const input = JSON.parse(raw.toString() || '{}');
const sha = (s) => createHash('sha256').update(s).digest('hex');
const env = process.env;
process.stdout.write(JSON.stringify({ stdin_bytes: raw.length, text_sha256: sha(String(input.text ?? '')),
  files_sha256: (input.files ?? []).map((f) => sha(readFileSync(f.path))),
  secrets_sha256: sha((env.BIG_A ?? '') + (env.BIG_B ?? '') + (env.BIG_C ?? '')) }));`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
/** Text of `bytes` ASCII characters (no JSON escaping: the request carries it byte for byte). */
const textOf = (bytes: number, seed: string) => seed.repeat(Math.ceil(bytes / seed.length)).slice(0, bytes);
/** Three secrets at the secret size limit's edge (64 KiB each). */
const SECRETS = {
  BIG_A: textOf(64 * 1024 - 16, 'secret-a-'),
  BIG_B: textOf(64 * 1024 - 16, 'secret-b-'),
  BIG_C: textOf(64 * 1024 - 16, 'secret-c-'),
};
/** The one 413 for a body past AWS's event budget, on both deployments. */
const TOO_LARGE = errorEnvelope(eventBodyTooLarge(), 'req').error;
type SchedulePage = { schedules: { id: string }[]; total: number; next_offset: number | null };
type Hashes = { stdin_bytes: number; text_sha256: string; secrets_sha256: string; files_sha256: string[] };

eachDeployment('large values: passed whole, stored apart, answered inline or by URL', {}, (kind) => {
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
    for (const [name, value] of Object.entries(SECRETS)) {
      const put = await d.request('PUT', `/workspaces/${ws}/secrets`, { body: { name, value } });
      assert.equal(put.status, 200, put.text);
    }
    const hasher = await d.request<{ id: string }>('POST', '/agents', {
      body: {
        name: 'hasher',
        type: 'tool',
        description: 'Prints the SHA-256 of what it was given.',
        supported_providers: ['any'],
        runtime: { command: 'node main.mjs' },
        required_secrets: Object.keys(SECRETS),
        timeout_seconds: 25,
      },
    });
    assert.equal(hasher.status, 201, hasher.text);
    const upHasher = await d.request('POST', `/agents/${hasher.body.id}/upload`, {
      rawBody: await bundleOf({ 'main.mjs': HASHER }),
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(upHasher.status, 200, upHasher.text);
  });
  after(async () => {
    await d?.close();
  });

  const schedule = async (type: 'webhook' | 'cron', input: Record<string, unknown>) => {
    const res = await d.request<{ id: string; webhook_url?: string }>('POST', `/workspaces/${ws}/schedules`, {
      body: {
        agent: 'local/repeater',
        type,
        input_data: input,
        ...(type === 'cron' ? { cron_expression: '0 3 * * *' } : {}),
      },
    });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };
  const runs = async (id: string) =>
    (await d.request<{ runs: Run[] }>('GET', `/workspaces/${ws}/schedules/${id}/runs`)).body.runs;
  const events = async (id: string) =>
    (await d.request<{ events: { type: string }[] }>('GET', `/workspaces/${ws}/schedules/${id}/events`)).body
      .events;
  const call = (input: Record<string, unknown>) =>
    d.request<Envelope>('POST', '/local/repeater/v1/run', { body: input });

  it('passes a 5 MB call input and three 64 KiB secrets to the tool whole', async () => {
    const text = textOf(5 * 1024 * 1024, 'stdin-0123456789');
    const res = await d.request<Envelope>('POST', '/local/hasher/v1/run', { body: { text } });
    assert.equal(res.status, 200, `${res.text.slice(0, 500)}\n${d.output().slice(-2000)}`);
    const got = res.body.data as unknown as Hashes;
    assert.equal(got.text_sha256, sha256(text), 'the input arrived whole');
    assert.ok(got.stdin_bytes > text.length, `stdin was ${got.stdin_bytes} bytes`);
    assert.equal(got.secrets_sha256, sha256(SECRETS.BIG_A + SECRETS.BIG_B + SECRETS.BIG_C));
  });

  it('passes a schedule input_data at its limit (256 KiB) to the tool whole', async () => {
    const text = textOf(MAX_INPUT_DATA_BYTES - JSON.stringify({ text: '' }).length, 'input-data-');
    const created = await d.request<{ id: string }>('POST', `/workspaces/${ws}/schedules`, {
      body: { agent: 'local/hasher', type: 'cron', cron_expression: '0 3 * * *', input_data: { text } },
    });
    assert.equal(created.status, 201, created.text.slice(0, 500));
    const res = await d.request<Run>('POST', `/workspaces/${ws}/schedules/${created.body.id}/trigger`, {
      body: {},
    });
    assert.equal(res.status, 200, res.text.slice(0, 500));
    assert.equal(res.body.status, 'success', res.body.error ?? '');
    assert.equal((res.body.output as unknown as Hashes).text_sha256, sha256(text));
  });

  // Problem 4: sizes in bytes at entry, the same 400 on both (DynamoDB once answered a retryable
  // 500 on AWS alone for what was accepted locally).
  const invalid = (res: { status: number; text: string; body: unknown }, field: string, limit: number) => {
    assert.equal(res.status, 400, res.text.slice(0, 500));
    const error = (res.body as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'INVALID_INPUT');
    assert.match(error.message, new RegExp(`${field}.*at most ${limit} bytes`));
  };

  it('refuses a schedule input_data one byte over its limit, naming it', async () => {
    const text = textOf(MAX_INPUT_DATA_BYTES - JSON.stringify({ text: '' }).length + 1, 'over-');
    const res = await d.request('POST', `/workspaces/${ws}/schedules`, {
      body: { agent: 'local/hasher', type: 'cron', cron_expression: '0 3 * * *', input_data: { text } },
    });
    invalid(res, 'input_data', MAX_INPUT_DATA_BYTES);
  });

  it('counts a prompt template in bytes: at the limit accepted, one character more refused', async () => {
    const euros = MAX_PROMPT_TEMPLATE_BYTES / 3; // € is 3 bytes in UTF-8
    const prompt = (name: string, n: number) =>
      d.request('POST', '/agents', {
        body: {
          name,
          description: 'A long prompt.',
          supported_providers: ['any'],
          prompt_template: '€'.repeat(n),
        },
      });
    const at = await prompt('euros-at', euros);
    assert.equal(at.status, 201, at.text.slice(0, 500));
    invalid(await prompt('euros-over', euros + 1), 'prompt_template', MAX_PROMPT_TEMPLATE_BYTES);
  });

  it('refuses a manifest over its limit as a whole, naming it', async () => {
    const tool = (i: number) => ({
      name: `tool_${i}`,
      description: 'x'.repeat(60_000),
      input_schema: { type: 'object' },
    });
    const res = await d.request('POST', '/agents', {
      body: {
        name: 'many-tools',
        type: 'agent',
        description: 'Fourteen tools.',
        supported_providers: ['any'],
        custom_tools: Array.from({ length: 14 }, (_, i) => tool(i)),
      },
    });
    assert.equal(res.status, 400, res.text.slice(0, 500));
    assert.match(res.text, new RegExp(`at most ${MAX_MANIFEST_BYTES} bytes`));
  });

  it('refuses a service env over its limit at deploy, leaving no service behind', async () => {
    const env = Object.fromEntries(
      Array.from({ length: 3 }, (_, i) => [`BIG_${i}`, textOf(MAX_SERVICE_ENV_BYTES / 3, 'env-')]),
    );
    const res = await d.request('POST', `/workspaces/${ws}/services`, {
      body: { agent: 'local/repeater', name: 'big-env', env },
    });
    invalid(res, 'env', MAX_SERVICE_ENV_BYTES);
    const list = await d.request<{ services: unknown[] }>('GET', `/workspaces/${ws}/services`);
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.services, []);
  });

  // The env and the secrets travel in the ECS task definition together (64 KiB at most): a full
  // env with 100 long secret names was over it. At the limit the deploy succeeds on both (the
  // emulated ECS refuses a task definition over 64 KiB as ECS does); one secret more is a 400.
  it('deploys a service with env and secrets at their joint limit, and refuses one secret more', async () => {
    const names = Array.from({ length: 33 }, (_, i) => `S${String(i).padStart(2, '0')}_`.padEnd(128, 'X'));
    for (const name of names) {
      const put = await d.request('PUT', `/workspaces/${ws}/secrets`, {
        body: { name, value: `v-${name.slice(0, 3)}` },
      });
      assert.equal(put.status, 200, put.text);
    }
    const perVariable = 3270;
    const env = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [`V${i}`, textOf(perVariable - `V${i}`.length, 'value-')]),
    );
    const envBytes = 10 * perVariable;
    const fit = Math.floor((MAX_SERVICE_SETTINGS_BYTES - envBytes) / SERVICE_SECRET_BYTES);
    assert.equal(fit, 24);
    const over = await d.request('POST', `/workspaces/${ws}/services`, {
      body: { agent: 'local/repeater', name: 'settings-over', env, secrets: names.slice(0, fit + 1) },
    });
    assert.equal(over.status, 400, over.text.slice(0, 500));
    assert.match(over.text, new RegExp(`body.secrets.*at most ${MAX_SERVICE_SETTINGS_BYTES} bytes`));
    const at = await d.request<{ id: string }>('POST', `/workspaces/${ws}/services`, {
      body: { agent: 'local/repeater', name: 'settings-at', env, secrets: names.slice(0, fit) },
    });
    assert.equal(at.status, 201, `${at.text.slice(0, 500)}\n${d.output().slice(-2000)}`);
    assert.equal((await d.request('DELETE', `/workspaces/${ws}/services/${at.body.id}`)).status, 204);
    const list = await d.request<{ services: { name: string }[] }>('GET', `/workspaces/${ws}/services`);
    assert.ok(!list.body.services.some((x) => x.name === 'settings-over'), 'the refused deploy left nothing');
  });

  // Problem 3's lists: 50 schedules of large input_data were a 7.7 MB answer, a 502 on AWS.
  it('pages schedules by size: every page fits a Lambda response, every schedule listed once', async () => {
    const before = await d.request<{ total: number }>('GET', `/workspaces/${ws}/schedules`);
    const count = Math.ceil(INLINE_OUTPUT_BYTES / MAX_INPUT_DATA_BYTES) + 2;
    const created = new Set<string>();
    for (let i = 0; i < count; i++) {
      const text = textOf(MAX_INPUT_DATA_BYTES - JSON.stringify({ text: '' }).length, `page-${i}-`);
      const res = await d.request<{ id: string }>('POST', `/workspaces/${ws}/schedules`, {
        body: { agent: 'local/hasher', type: 'cron', cron_expression: '0 3 * * *', input_data: { text } },
      });
      assert.equal(res.status, 201, res.text.slice(0, 300));
      created.add(res.body.id);
    }
    const seen: string[] = [];
    let pages = 0;
    for (let offset: number | null = 0; offset !== null; pages++) {
      const res: ApiResponse<SchedulePage> = await d.request<SchedulePage>(
        'GET',
        `/workspaces/${ws}/schedules?limit=50&offset=${offset}`,
      );
      assert.equal(res.status, 200, res.text.slice(0, 300));
      assert.ok(Buffer.byteLength(res.text) <= INLINE_OUTPUT_BYTES, `a page of ${res.text.length} bytes`);
      assert.equal(res.body.total, before.body.total + count);
      seen.push(...res.body.schedules.map((s) => s.id));
      offset = res.body.next_offset;
    }
    assert.ok(pages > 1, 'the list took more than one page');
    assert.equal(new Set(seen).size, seen.length, 'no schedule twice');
    for (const id of created) assert.ok(seen.includes(id), `schedule ${id} listed`);
  });

  // Problem 8: one request-size limit on both deployments, counted as AWS carries a body to its
  // function (event-body-budget.ts), with one 413 whether the platform or API Gateway refuses it.
  const sameRefusal = (res: { status: number; text: string; body: unknown }) => {
    assert.equal(res.status, 413, res.text.slice(0, 300));
    assert.deepEqual((res.body as { error: unknown }).error, TOO_LARGE, res.text.slice(0, 300));
  };
  /** A call input {text} of `n` quotes: two bytes each in the body, four as the event carries it. */
  const quotes = (n: number) => ({ text: '"'.repeat(n) });
  const carried = (body: unknown) => Buffer.byteLength(JSON.stringify(JSON.stringify(body))) - 2;
  const mostQuotes = Math.floor((EVENT_BODY_BYTES - carried(quotes(0))) / 4);

  it('takes a call body of quotes at the limit as carried whole, and refuses one quote more', async () => {
    const at = quotes(mostQuotes);
    assert.equal(carried(at), EVENT_BODY_BYTES - ((EVENT_BODY_BYTES - carried(quotes(0))) % 4));
    const res = await d.request<Envelope>('POST', '/local/hasher/v1/run', { body: at });
    assert.equal(res.status, 200, `${res.text.slice(0, 500)}\n${d.output().slice(-2000)}`);
    assert.equal(
      (res.body.data as unknown as Hashes).text_sha256,
      sha256(at.text),
      'the input arrived whole',
    );
    sameRefusal(await d.request('POST', '/local/hasher/v1/run', { body: quotes(mostQuotes + 1) }));
  });

  it('refuses a body far past the limit with the same 413 on every route (API Gateway’s own on AWS)', async () => {
    const text = '"'.repeat(3_400_000); // 6.8 MB as JSON, 13.6 MB in a Lambda event
    sameRefusal(
      await d.request('POST', `/workspaces/${ws}/schedules`, {
        body: { agent: 'local/hasher', type: 'cron', cron_expression: '0 3 * * *', input_data: { text } },
      }),
    );
    sameRefusal(await d.request('POST', '/local/hasher/v1/run', { body: { text } }));
  });

  it('counts a multipart call and a bundle as base64: the largest file arrives whole, one byte more is refused', async () => {
    const multipart = async (file: Buffer) => {
      const form = new FormData();
      form.append('file', new Blob([file], { type: 'text/plain' }), 'a.txt');
      const request = new Request('http://multipart.invalid/', { method: 'POST', body: form });
      const body = Buffer.from(await request.arrayBuffer());
      const headers = { 'content-type': request.headers.get('content-type') as string };
      return { body, headers, framing: body.length - file.length };
    };
    const framing = (await multipart(Buffer.alloc(1))).framing;
    // The largest file a call carries: the body at the largest binary size, framing included.
    const largest = Buffer.alloc(MAX_BINARY_BODY_BYTES - framing, 0x61);
    largest.write('first bytes', 0);
    largest.write('last bytes', largest.length - 10);
    const fits = await multipart(largest);
    assert.equal(fits.body.length, MAX_BINARY_BODY_BYTES);
    const res = await d.request<Envelope>('POST', '/local/hasher/v1/run', {
      rawBody: fits.body,
      headers: fits.headers,
    });
    assert.equal(res.status, 200, `${res.text.slice(0, 500)}\n${d.output().slice(-2000)}`);
    assert.deepEqual(
      (res.body.data as unknown as Hashes).files_sha256,
      [sha256Of(largest)],
      'the file arrived whole',
    );
    const over = await multipart(Buffer.concat([largest, Buffer.from('!')]));
    sameRefusal(
      await d.request('POST', '/local/hasher/v1/run', { rawBody: over.body, headers: over.headers }),
    );
    const archive = Buffer.alloc(MAX_BINARY_BODY_BYTES + 1);
    archive.set([0x1f, 0x8b, 0x08]);
    const agents = await d.request<{ agents: { id: string; name: string }[] }>('GET', '/agents?limit=50');
    const hasher = agents.body.agents.find((a) => a.name === 'hasher')?.id as string;
    sameRefusal(
      await d.request('POST', `/agents/${hasher}/upload`, {
        rawBody: archive,
        headers: { 'content-type': 'application/gzip' },
      }),
    );
    const atLimit = await d.request('POST', `/agents/${hasher}/upload`, {
      rawBody: archive.subarray(0, MAX_BINARY_BODY_BYTES),
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(
      atLimit.status,
      422,
      `at the limit the archive is read and judged: ${atLimit.text.slice(0, 300)}`,
    );
  });

  // 600 KB as DynamoDB counts a string    // 600 KB as DynamoDB counts a string (UTF-8: € is 3 bytes), 750 KB as JSON: over the 400 KB
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

  // Problem 6: stdout past the sandbox's 4 MiB limit once answered a retryable 500 "did not
  // print a JSON object", and the documented TRUNCATED warning could never appear.
  it('answers stdout of exactly the output limit whole, one byte more 422 naming the limit', async () => {
    const limit = DEFAULT_SANDBOX_LIMITS.outputBytes;
    const n = limit - JSON.stringify({ text: '' }).length;
    const whole = await call({ ch: 'x', n });
    assert.equal(whole.status, 200, whole.text.slice(0, 500));
    assert.deepEqual(whole.body.warnings, []);
    assert.equal((whole.body.data.text as string).length, n);
    const over = await call({ ch: 'x', n: n + 1 });
    assert.equal(over.status, 422, over.text.slice(0, 500));
    const error = (
      over.body as unknown as { error: { code: string; is_retryable: boolean; message: string } }
    ).error;
    assert.equal(error.code, 'UNPROCESSABLE');
    assert.equal(error.is_retryable, false);
    assert.match(error.message, new RegExp(`more than the output limit of ${limit} bytes on stdout`));
  });

  it('answers a JSON object followed past the output limit with the TRUNCATED warning', async () => {
    const res = await call({ ch: 'y', n: 10, pad: DEFAULT_SANDBOX_LIMITS.outputBytes });
    assert.equal(res.status, 200, res.text.slice(0, 500));
    assert.deepEqual(res.body.data, { text: 'y'.repeat(10) });
    assert.deepEqual(
      res.body.warnings.map((w) => w.code),
      ['TRUNCATED'],
    );
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
