import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { packDirectory } from '../../functions/cli/pack.ts';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { callRecordKeys, fromCallRecordItem } from '../../functions/core/usage/call-records.ts';
import { dailyCounterKeys, utcDay } from '../../functions/core/usage/daily-usage.ts';
import { queryAll } from '../../functions/ports/store.ts';
import { bundleOf } from '../helpers/bundles.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

type Envelope = {
  data: Record<string, unknown>;
  warnings: { code: string }[];
  metadata: { request_id: string };
};

const SECRET = 'sk-live-DO-NOT-LEAK-0123456789abcdef';

describe('tool agents (code_runtime) in the sandbox, end to end over HTTP', () => {
  let p: TestPlatform;
  let owner: { key: string; id: string; ws: string };

  const publishTool = async (name: string, script: string, extra: Record<string, unknown> = {}) => {
    const res = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      key: owner.key,
      body: {
        name,
        type: 'tool',
        description: `${name} tool`,
        supported_providers: ['any'],
        runtime: { command: 'node main.mjs' },
        required_secrets: [],
        ...extra,
      },
    });
    assert.equal(res.status, 201, res.text);
    const up = await p.request('POST', `/agents/${res.body.id}/upload`, {
      key: owner.key,
      rawBody: await bundleOf({ 'main.mjs': script }),
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(up.status, 200, up.text);
    return res.body.id;
  };
  const call = (name: string, body: unknown, headers: Record<string, string> = {}, key = owner.key) =>
    p.request<Envelope>('POST', `/toolco/${name}/v1/run`, { key, body, headers });

  const readStdin = `const chunks = []; for await (const c of process.stdin) chunks.push(c); const input = JSON.parse(Buffer.concat(chunks).toString() || '{}');`;

  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
    const o = await createAccount(p.deps, { org: 'toolco', tier: 'pro' });
    owner = { key: o.api_key, id: o.account.id, ws: o.workspace_id };
  });
  after(() => p.close());

  it('runs the command with the JSON input on stdin and answers its stdout JSON as data', async () => {
    await publishTool(
      'adder',
      `${readStdin} console.log(JSON.stringify({ sum: input.a + input.b, cwd: process.cwd() }));`,
    );
    const res = await call('adder', { a: 2, b: 3 });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, { sum: 5, cwd: '/work' });
  });

  it('runs the word-count example end to end', async () => {
    const { readFile } = await import('node:fs/promises');
    const manifest = JSON.parse(
      await readFile(new URL('../../examples/tool-word-count/agent.json', import.meta.url), 'utf8'),
    );
    const res = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      key: owner.key,
      body: manifest,
    });
    assert.equal(res.status, 201, res.text);
    const { data } = await packDirectory(
      new URL('../../examples/tool-word-count/', import.meta.url).pathname,
      manifest.bundle,
    );
    await p.request('POST', `/agents/${res.body.id}/upload`, {
      key: owner.key,
      rawBody: data,
      headers: { 'content-type': 'application/gzip' },
    });
    const out = await call('word-count', { text: 'one two three\nfour' });
    assert.equal(out.status, 200, out.text);
    assert.deepEqual(out.body.data, { words: 4, lines: 2, characters: 18 });
  });

  it('places files in the sandbox and passes the spec’s manifest on stdin', async () => {
    await publishTool(
      'files',
      `import { readFileSync } from 'node:fs'; ${readStdin} console.log(JSON.stringify({ manifest: input, first: readFileSync(input.files[0].path, 'utf8') }));`,
    );
    const form = new FormData();
    form.append('files[]', new Blob(['alpha'], { type: 'text/plain' }), 'a.txt');
    form.append('files[]', new Blob(['{"b":1}'], { type: 'application/json' }), 'b.json');
    form.append('metadata', JSON.stringify({ purpose: 'test' }));
    const res = await p.fetch(`/toolco/files/v1/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.key}` },
      body: form,
    });
    const body = (await res.json()) as Envelope;
    assert.equal(res.status, 200, JSON.stringify(body));
    const manifest = body.data.manifest as { files: Record<string, unknown>[]; metadata: unknown };
    assert.equal(body.data.first, 'alpha');
    assert.deepEqual(manifest.metadata, { purpose: 'test' });
    assert.equal(manifest.files.length, 2);
    assert.deepEqual(Object.keys(manifest.files[0] ?? {}).sort(), [
      'content_type',
      'original_name',
      'path',
      'size_bytes',
    ]);
    assert.match(String(manifest.files[0]?.path), /^\/work\/input\//);
    assert.equal(manifest.files[1]?.original_name, 'b.json');
    assert.equal(manifest.files[1]?.size_bytes, 7);
  });

  it('takes any file type (a binary, a .tar.gz) unless accepted_file_types narrows it, which publishing checks', async () => {
    await publishTool(
      'anyfile',
      `import { readFileSync } from 'node:fs'; ${readStdin} console.log(JSON.stringify({ types: input.files.map((f) => f.content_type), bytes: input.files.map((f) => readFileSync(f.path).length) }));`,
    );
    await publishTool('pdfonly', `${readStdin} console.log(JSON.stringify({ n: input.files.length }));`, {
      accepted_file_types: ['application/pdf', 'image/*'],
    });
    const send = (name: string, parts: [string, string][]) => {
      const form = new FormData();
      for (const [type, filename] of parts)
        form.append('files[]', new Blob([Buffer.from([0, 1, 2, 255])], { type }), filename);
      return p.fetch(`/toolco/${name}/v1/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.key}` },
        body: form,
      });
    };
    const any = await send('anyfile', [
      ['application/octet-stream', 'blob.bin'],
      ['application/gzip', 'data.tar.gz'],
    ]);
    const anyBody = (await any.json()) as Envelope;
    assert.equal(any.status, 200, JSON.stringify(anyBody));
    assert.deepEqual(anyBody.data, {
      types: ['application/octet-stream', 'application/gzip'],
      bytes: [4, 4],
    });

    assert.equal(
      (
        await send('pdfonly', [
          ['image/png', 'a.png'],
          ['application/pdf', 'b.pdf'],
        ])
      ).status,
      200,
    );
    const narrowed = await send('pdfonly', [['application/octet-stream', 'blob.bin']]);
    assert.equal(narrowed.status, 415);
    assert.match(await narrowed.text(), /accepted_file_types \(application\/pdf, image\/\*\)/);

    const bad = await p.request('POST', '/agents?allow_no_secrets=true', {
      key: owner.key,
      body: {
        name: 'badtypes',
        type: 'tool',
        description: 'x',
        supported_providers: ['any'],
        runtime: { command: 'true' },
        required_secrets: [],
        accepted_file_types: ['pdf'],
      },
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(errorOf(bad).fields, ['body.accepted_file_types.0']);
  });

  it('injects exactly the declared secrets; a missing required one is 400 MISSING_SECRETS by name', async () => {
    await p.request('PUT', `/workspaces/${owner.ws}/secrets`, {
      key: owner.key,
      body: { name: 'API_TOKEN', value: SECRET },
    });
    await p.request('PUT', `/workspaces/${owner.ws}/secrets`, {
      key: owner.key,
      body: { name: 'UNDECLARED', value: 'x-undeclared-x' },
    });
    const envProbe = `console.log(JSON.stringify({ token_length: (process.env.API_TOKEN ?? '').length, optional: process.env.OPTIONAL_ONE ?? null, undeclared: process.env.UNDECLARED ?? null, platform: process.env.PLATFORM_AGENT }));`;
    await publishTool('secretive', envProbe, {
      required_secrets: ['API_TOKEN'],
      optional_secrets: ['OPTIONAL_ONE'],
    });
    const ok = await call('secretive', {});
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.data, {
      token_length: SECRET.length,
      optional: null,
      undeclared: null,
      platform: 'toolco/secretive/v1',
    });

    await publishTool('needy', envProbe, { required_secrets: ['NOT_IN_VAULT', 'API_TOKEN'] });
    const missing = await call('needy', {});
    assert.equal(missing.status, 400);
    const err = errorOf(missing);
    assert.equal(err.code, 'MISSING_SECRETS');
    assert.match(err.message, /NOT_IN_VAULT/);
    assert.ok(!missing.text.includes(SECRET));
  });

  it('redacts a secret returned in its encoded forms from the response and the logs', async () => {
    const id = await publishTool(
      'leaker',
      `const t = process.env.API_TOKEN, b = Buffer.from(t), forms = { raw: t, b64: b.toString('base64'), b64url: b.toString('base64url'), hex: b.toString('hex'), url: encodeURIComponent(t), blob: Buffer.from('xy' + t + 'z').toString('base64') }; console.error(JSON.stringify(forms)); console.log(JSON.stringify(forms));`,
      { required_secrets: ['API_TOKEN'] },
    );
    const res = await call('leaker', {});
    assert.equal(res.status, 200, res.text);
    const b = Buffer.from(SECRET);
    const forms = [
      SECRET,
      b.toString('base64').replace(/=+$/, ''),
      b.toString('base64url'),
      b.toString('hex'),
      encodeURIComponent(SECRET),
      Buffer.from(`xy${SECRET}z`).toString('base64').slice(4, 12),
    ];
    for (const f of forms) assert.ok(!res.text.includes(f), `${f} not in the response`);
    const logs = await p.request('GET', `/agents/${id}/logs`, { key: owner.key });
    for (const f of forms) assert.ok(!logs.text.includes(f), `${f} not in the logs`);
  });

  it('answers 500 for a failing command, keeping its redacted stderr in the agent’s logs only', async () => {
    const id = await publishTool(
      'crasher',
      `console.error('boom with ' + process.env.API_TOKEN); process.exit(3);`,
      {
        required_secrets: ['API_TOKEN'],
      },
    );
    const res = await call('crasher', {});
    assert.equal(res.status, 500);
    const err = errorOf(res);
    assert.equal(err.code, 'INTERNAL_ERROR');
    assert.match(err.message, /exited with status 3/);
    assert.ok(!res.text.includes('boom'), 'no stderr in the response');
    const logs = await p.request<{ logs: { message: string }[] }>('GET', `/agents/${id}/logs`, {
      key: owner.key,
    });
    const text = logs.body.logs.map((l) => l.message).join('\n');
    assert.match(text, /boom with \[REDACTED\]/);
    assert.ok(!text.includes(SECRET), 'the secret value is redacted from stored logs');

    await publishTool('chatty', `console.log('not json');`);
    const notJson = await call('chatty', {});
    assert.equal(notJson.status, 500);
    assert.match(errorOf(notJson).message, /did not print a JSON object/);
  });

  it('stops a command at the deadline with 504 and records its compute time', async () => {
    await publishTool('spinner', 'while (true) {}');
    const started = Date.now();
    const res = await call(
      'spinner',
      {},
      { 'x-platform-deadline-ms': String(p.clock.now().getTime() + 1_500) },
    );
    assert.equal(res.status, 504, res.text);
    assert.ok(Date.now() - started < 5_000);
    await call('adder', { a: 1, b: 1 });
    const records = (await queryAll(p.deps.store, { pk: callRecordKeys.callerPk(owner.id) })).map(
      fromCallRecordItem,
    );
    const adder = records.filter((r) => r.agent === 'adder' && r.status === 'success');
    assert.ok(adder.length > 0 && adder.every((r) => (r.compute_ms ?? 0) > 0), 'compute time is recorded');
  });

  it('refuses a call of a tool agent without an uploaded bundle with 400 naming it, spending no quota', async () => {
    const res = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      key: owner.key,
      body: {
        name: 'unbundled',
        type: 'tool',
        description: 'never uploaded',
        supported_providers: ['any'],
        runtime: { command: 'node main.mjs' },
      },
    });
    assert.equal(res.status, 201, res.text);
    const day = utcDay(p.clock.now());
    const before = await p.deps.store.get(dailyCounterKeys.sandboxRuns(owner.id, day));
    const refused = await call('unbundled', {});
    assert.equal(refused.status, 400, refused.text);
    assert.equal(errorOf(refused).code, 'INVALID_INPUT');
    assert.deepEqual(errorOf(refused).fields, ['bundle']);
    assert.match(errorOf(refused).message, /no uploaded code bundle/);
    const afterCall = await p.deps.store.get(dailyCounterKeys.sandboxRuns(owner.id, day));
    assert.equal(afterCall?.calls, before?.calls, 'no sandbox run was counted');
  });

  it('counts sandbox runs against their own daily quota (Free: 50) as well as the daily calls', async () => {
    const free = await createAccount(p.deps, { org: 'tool-free', tier: 'free' });
    const res = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      key: free.api_key,
      body: {
        name: 'echo',
        type: 'tool',
        description: 'echo',
        supported_providers: ['any'],
        runtime: { command: 'echo {}' },
      },
    });
    assert.equal(res.status, 201, res.text);
    const up = await p.request('POST', `/agents/${res.body.id}/upload`, {
      key: free.api_key,
      rawBody: await bundleOf({ 'README.md': 'echo\n' }),
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(up.status, 200, up.text);
    const day = utcDay(p.clock.now());
    await p.deps.store.put({ ...dailyCounterKeys.sandboxRuns(free.account.id, day), calls: 49 });
    const first = await p.request('POST', '/tool-free/echo/v1/run', { key: free.api_key, body: {} });
    assert.equal(first.status, 200, first.text);
    const second = await p.request('POST', '/tool-free/echo/v1/run', { key: free.api_key, body: {} });
    assert.equal(second.status, 429);
    assert.match(errorOf(second).message, /50 sandbox runs/);
    // The refusal describes the sandbox quota, in its details and its headers.
    assert.equal((second.body as { error: { details: { quota: string } } }).error.details.quota, 'sandbox');
    assert.equal(second.headers.get('x-ratelimit-limit'), '50');
    assert.equal(second.headers.get('x-ratelimit-remaining'), '0');
    // GET /usage shows both quotas.
    const usage = await p.request<{
      quota: { limit: number; used: number };
      sandbox_quota: { limit: number; used: number; remaining: number };
    }>('GET', '/usage', { key: free.api_key });
    assert.equal(usage.status, 200, usage.text);
    assert.deepEqual(
      [usage.body.sandbox_quota.limit, usage.body.sandbox_quota.used, usage.body.sandbox_quota.remaining],
      [50, 50, 0],
    );
    // The call that ran counted against the daily calls too; the refused one against neither.
    assert.deepEqual([usage.body.quota.limit, usage.body.quota.used], [1000, 1]);
  });
});
