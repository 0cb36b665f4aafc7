import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { MAX_FILE_BYTES } from '../../functions/core/calls/call-limits.ts';
import { callRecordKeys, fromCallRecordItem } from '../../functions/core/usage/call-records.ts';
import { queryAll } from '../../functions/ports/store.ts';
import { EVENT_BODY_BYTES } from '../../functions/shared/byte-limits.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

type Envelope = {
  data: Record<string, unknown>;
  warnings: { code: string; field?: string; message: string }[];
  metadata: { request_id: string; processing_time_ms: number; version: string };
};

const summarise = (extra: Record<string, unknown> = {}) => ({
  name: 'summarise',
  description: 'Summarises text.',
  supported_providers: ['anthropic', 'openai', 'google'],
  prompt_template: 'Summarise in {{sentences}} sentences: {{text}}',
  input_schema: {
    type: 'object',
    properties: {
      text: { type: 'string', minLength: 1 },
      sentences: { type: 'integer', minimum: 1, maximum: 5 },
      style: { type: 'string', deprecated: true },
    },
    required: ['text', 'sentences'],
    additionalProperties: false,
  },
  ...extra,
});

describe('calling agents (end to end over HTTP, fake providers on loopback)', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let owner: { key: string; org: string };

  const call = (
    path: string,
    body: unknown,
    options: { key?: string; headers?: Record<string, string> } = {},
  ) => p.request<Envelope>('POST', path, { key: options.key ?? owner.key, body, headers: options.headers });

  // On a socket: in memory, refusing an oversized multipart body (413) made undici's FormData body
  // stream throw (ReadableStream is already closed).
  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform({
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
      OPENAI_API_KEY: 'sk-openai-test',
      OPENAI_BASE_URL: fake.baseUrls.openai,
      GOOGLE_GENERATIVE_AI_API_KEY: 'google-test',
      GOOGLE_GENERATIVE_AI_BASE_URL: fake.baseUrls.google,
      OLLAMA_BASE_URL: fake.baseUrls.ollama,
    });
    const o = await createAccount(p.deps, { org: 'callco', tier: 'pro' });
    owner = { key: o.api_key, org: 'callco' };
    const published = await p.request('POST', '/agents', {
      key: owner.key,
      body: summarise({ default_models: { openai: 'gpt-test-mini' } }),
    });
    assert.equal(published.status, 201, published.text);
  });
  after(async () => {
    await p.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  for (const provider of ['anthropic', 'openai', 'google'] as const) {
    it(`calls a prompt agent through ${provider} and answers the success envelope`, async () => {
      fake.enqueue({ text: `summary from ${provider}`, usage: { inputTokens: 11, outputTokens: 7 } });
      const res = await call(
        '/callco/summarise/v1/run',
        { text: 'A long text.', sentences: 2 },
        {
          headers: { 'x-platform-provider': provider },
        },
      );
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.data, { text: `summary from ${provider}` });
      assert.deepEqual(res.body.warnings, []);
      assert.equal(res.body.metadata.version, 'v1');
      assert.equal(typeof res.body.metadata.processing_time_ms, 'number');
      assert.equal(res.body.metadata.request_id, res.headers.get('x-request-id'));
      const upstream = fake.calls.at(-1);
      assert.equal(upstream?.provider, provider);
      assert.equal(upstream?.prompt, 'Summarise in 2 sentences: A long text.');
      assert.match(upstream?.system ?? '', /Summarises text/);
    });
  }

  it('calls an agent that supports any provider through the local Ollama provider', async () => {
    const published = await p.request('POST', '/agents', {
      key: owner.key,
      body: {
        name: 'anywhere',
        description: 'Runs anywhere.',
        supported_providers: ['any'],
        prompt_template: 'Say {{word}}',
      },
    });
    assert.equal(published.status, 201, published.text);
    fake.enqueue({ text: 'local answer' });
    const res = await call(
      '/callco/anywhere/v1/run',
      { word: 'hi' },
      { headers: { 'x-platform-provider': 'ollama' } },
    );
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, { text: 'local answer' });
    assert.equal(fake.calls.at(-1)?.provider, 'ollama');
    assert.equal(fake.calls.at(-1)?.model, 'llama3.2');
    assert.equal(fake.calls.at(-1)?.prompt, 'Say hi');
  });

  it('resolves the model: caller override, then default_models, then the platform default', async () => {
    await call(
      '/callco/summarise/v1/run',
      { text: 't', sentences: 1 },
      { headers: { 'x-platform-provider': 'openai' } },
    );
    assert.equal(fake.calls.at(-1)?.model, 'gpt-test-mini', 'default_models[provider]');
    await call(
      '/callco/summarise/v1/run',
      { text: 't', sentences: 1 },
      {
        headers: { 'x-platform-provider': 'openai', 'x-platform-model': 'gpt-caller-choice' },
      },
    );
    assert.equal(fake.calls.at(-1)?.model, 'gpt-caller-choice', 'caller override');
    await call(
      '/callco/summarise/v1/run',
      { text: 't', sentences: 1 },
      { headers: { 'x-platform-provider': 'google' } },
    );
    assert.equal(fake.calls.at(-1)?.model, 'gemini-2.5-flash', 'platform default');
    const bad = await call(
      '/callco/summarise/v1/run',
      { text: 't', sentences: 1 },
      { headers: { 'x-platform-provider': 'ollama' } },
    );
    assert.equal(bad.status, 400, 'a provider the agent does not support');
    assert.ok(errorOf(bad).fields.includes('header.x-platform-provider'));
  });

  it('validates input against input_schema, listing every failing path', async () => {
    const res = await call('/callco/summarise/v1/run', { sentences: 9, extra: true });
    assert.equal(res.status, 400);
    const err = errorOf(res);
    assert.equal(err.code, 'INVALID_INPUT');
    for (const f of ['body.text', 'body.sentences', 'body'])
      assert.ok(err.fields.includes(f), `${f} in ${err.fields}`);
    assert.equal(fake.calls.length, 0, 'nothing reached the provider');
    const deprecated = await call('/callco/summarise/v1/run', { text: 't', sentences: 1, style: 'terse' });
    assert.deepEqual(
      deprecated.body.warnings.map((w) => [w.code, w.field]),
      [['DEPRECATED_FIELD', 'style']],
    );
  });

  it('answers 401, 403, 404 as the spec says', async () => {
    assert.equal(
      (await call('/callco/summarise/v1/run', { text: 't', sentences: 1 }, { key: 'ahk_nope' })).status,
      401,
    );
    const stranger = await createAccount(p.deps, { org: 'stranger', tier: 'pro' });
    const forbidden = await call(
      '/callco/summarise/v1/run',
      { text: 't', sentences: 1 },
      { key: stranger.api_key },
    );
    assert.equal(forbidden.status, 403);
    assert.equal(errorOf(forbidden).code, 'FORBIDDEN');
    for (const path of [
      '/nobody/summarise/v1/run',
      '/callco/nothing/v1/run',
      '/callco/summarise/v9/run',
      '/callco/summarise/v1/other',
    ]) {
      const res = await call(path, { text: 't', sentences: 1 });
      assert.equal(res.status, 404, path);
      assert.equal(errorOf(res).code, 'NOT_FOUND');
    }
  });

  it('renders structured output and validates it with ajv (502 when the model does not comply)', async () => {
    await p.request('POST', '/agents', {
      key: owner.key,
      body: {
        name: 'extract',
        description: 'Extracts a name.',
        supported_providers: ['openai'],
        prompt_template: 'Extract the name from: {{text}}',
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        output_schema: {
          type: 'object',
          properties: { name: { type: 'string' } },
          required: ['name'],
          additionalProperties: false,
        },
      },
    });
    fake.enqueue({ json: { name: 'Ada' } });
    const ok = await call('/callco/extract/v1/run', { text: 'Ada wrote it' });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.data, { name: 'Ada' });
    fake.enqueue({ json: { nom: 'Ada' }, usage: { inputTokens: 12, outputTokens: 4 } });
    const bad = await call('/callco/extract/v1/run', { text: 'Ada wrote it' });
    assert.equal(bad.status, 502);
    const err = errorOf(bad);
    assert.equal(err.code, 'LLM_ERROR');
    assert.equal(err.is_retryable, true);
    assert.match(err.message, /output_schema/);
    // The provider billed the answer the platform could not use: its record says so (not 0).
    const items = await queryAll(p.deps.store, { pk: callRecordKeys.callerPk(await accountId()) });
    const record = items
      .map(fromCallRecordItem)
      .find((r) => r.request_id === bad.headers.get('x-request-id'));
    assert.deepEqual(
      [
        record?.error_code,
        record?.provider,
        record?.input_tokens,
        record?.output_tokens,
        record?.total_tokens,
      ],
      ['LLM_ERROR', 'openai', 12, 4, 16],
    );
  });

  it('warns TRUNCATED at the token limit and maps provider failures to 502 LLM_ERROR', async () => {
    fake.enqueue({ text: 'cut of', finish: 'length' });
    const cut = await call(
      '/callco/summarise/v1/run',
      { text: 't', sentences: 1 },
      { headers: { 'x-platform-provider': 'anthropic' } },
    );
    assert.equal(cut.status, 200);
    assert.deepEqual(
      cut.body.warnings.map((w) => w.code),
      ['TRUNCATED'],
    );
    fake.enqueue({ status: 500 });
    const down = await call(
      '/callco/summarise/v1/run',
      { text: 't', sentences: 1 },
      { headers: { 'x-platform-provider': 'anthropic' } },
    );
    assert.equal(down.status, 502);
    assert.equal(errorOf(down).is_retryable, true);
    assert.ok(!down.text.includes('sk-ant-test'), 'no key in the error');
  });

  it('times out at the earliest deadline with 504 and aborts the upstream request', async () => {
    fake.enqueue({ text: 'late', delayMs: 3_000 });
    const deadline = p.clock.now().getTime() + 300;
    const started = Date.now();
    const res = await call(
      '/callco/summarise/v1/run',
      { text: 't', sentences: 1 },
      {
        headers: { 'x-platform-provider': 'openai', 'x-platform-deadline-ms': String(deadline) },
      },
    );
    assert.equal(res.status, 504);
    assert.equal(errorOf(res).code, 'TIMEOUT');
    assert.ok(Date.now() - started < 2_000, 'answered at the deadline, not after the upstream');
    assert.equal(await fake.calls.at(-1)?.settled, 'disconnected', 'the upstream request was aborted');
    const past = await call(
      '/callco/summarise/v1/run',
      { text: 't', sentences: 1 },
      {
        headers: { 'x-platform-deadline-ms': String(p.clock.now().getTime() - 1) },
      },
    );
    assert.equal(past.status, 504);
  });

  it('adds Deprecation, Sunset and Link headers to calls of a deprecated version', async () => {
    await p.request('POST', '/agents', { key: owner.key, body: summarise() });
    const res = await call('/callco/summarise/v1/run', { text: 't', sentences: 1 });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('deprecation'), 'true');
    assert.match(res.headers.get('sunset') ?? '', /GMT$/);
    assert.equal(res.headers.get('link'), '</callco/summarise/v2/run>; rel="successor-version"');
    const current = await call('/callco/summarise/v2/run', { text: 't', sentences: 1 });
    assert.equal(current.headers.get('deprecation'), null);
  });

  it('links a deprecated version to the newest version that still answers, or to none', async () => {
    const publish = async () =>
      (
        await p.request<{ id: string }>('POST', '/agents', {
          key: owner.key,
          body: summarise({ name: 'succeed' }),
        })
      ).body.id;
    await publish();
    const v2 = await publish();
    const input = { text: 't', sentences: 1 };
    assert.equal(
      (await call('/callco/succeed/v1/run', input)).headers.get('link'),
      '</callco/succeed/v2/run>; rel="successor-version"',
    );
    assert.equal((await p.request('DELETE', `/agents/${v2}`, { key: owner.key })).status, 204);
    assert.equal((await call('/callco/succeed/v2/run', input)).status, 404);
    const orphan = await call('/callco/succeed/v1/run', input);
    assert.equal(orphan.status, 200);
    assert.equal(orphan.headers.get('deprecation'), 'true');
    assert.equal(orphan.headers.get('link'), null, 'no link to a deleted version');
    await publish();
    assert.equal(
      (await call('/callco/succeed/v1/run', input)).headers.get('link'),
      '</callco/succeed/v3/run>; rel="successor-version"',
    );
  });

  it('records every call with tenant, status, provider, model and tokens', async () => {
    fake.enqueue({ text: 'x', usage: { inputTokens: 5, outputTokens: 3 } });
    const ok = await call(
      '/callco/summarise/v2/run',
      { text: 't', sentences: 1 },
      {
        headers: { 'x-platform-tenant': 'tenant-42', 'x-platform-provider': 'anthropic' },
      },
    );
    const bad = await call(
      '/callco/summarise/v2/run',
      { sentences: 1 },
      { headers: { 'x-platform-tenant': 'tenant-42' } },
    );
    const items = await queryAll(p.deps.store, {
      pk: callRecordKeys.callerPk(ok.body ? await accountId() : ''),
    });
    const records = items.map(fromCallRecordItem);
    const okRecord = records.find((r) => r.request_id === ok.body.metadata.request_id);
    assert.equal(okRecord?.status, 'success');
    assert.equal(okRecord?.tenant, 'tenant-42');
    assert.equal(okRecord?.provider, 'anthropic');
    assert.equal(okRecord?.input_tokens, 5);
    assert.equal(okRecord?.output_tokens, 3);
    const badRecord = records.find((r) => r.request_id === bad.headers.get('x-request-id'));
    assert.equal(badRecord?.status, 'error');
    assert.equal(badRecord?.error_code, 'INVALID_INPUT');
  });

  async function accountId(): Promise<string> {
    const { authenticate } = await import('../../functions/core/api-keys/api-keys.ts');
    return (await authenticate(p.deps, `Bearer ${owner.key}`)).accountId;
  }

  it('accepts multipart calls with files and metadata, and refuses oversized or unsupported files', async () => {
    await p.request('POST', '/agents', {
      key: owner.key,
      body: {
        name: 'reader',
        description: 'Reads files.',
        supported_providers: ['anthropic'],
        prompt_template: 'Read {{files}} for {{purpose}}',
      },
    });
    const form = new FormData();
    form.append('file', new Blob(['hello file'], { type: 'text/plain' }), 'note.txt');
    form.append('metadata', JSON.stringify({ purpose: 'testing' }));
    const res = await fetch(`${p.url}/callco/reader/v1/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.key}` },
      body: form,
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.match(fake.calls.at(-1)?.prompt ?? '', /hello file/);
    assert.match(fake.calls.at(-1)?.prompt ?? '', /for testing/);

    const exe = new FormData();
    exe.append('file', new Blob(['MZ'], { type: 'application/x-msdownload' }), 'a.exe');
    const unsupported = await fetch(`${p.url}/callco/reader/v1/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.key}` },
      body: exe,
    });
    assert.equal(unsupported.status, 415);

    const big = new FormData();
    // A file past what a multipart body can carry as base64 (the event budget, docs/limits.md).
    big.append('file', new Blob([Buffer.alloc(MAX_FILE_BYTES + 1)], { type: 'text/plain' }), 'big.txt');
    const tooLarge = await fetch(`${p.url}/callco/reader/v1/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.key}` },
      body: big,
    });
    assert.equal(tooLarge.status, 413);
    const refusal = (await tooLarge.json()) as { error: { code: string; details: { limit_bytes: number } } };
    assert.equal(refusal.error.code, 'DOCUMENT_TOO_LARGE');
    assert.equal(refusal.error.details.limit_bytes, EVENT_BODY_BYTES);
  });

  it('applies skills: defaults, X-Platform-Skills, Skills-Only, No-Skills, and skills_locked', async () => {
    const skill = (name: string, body: string) => ({
      type: 'skill',
      skill_md: `---\nname: ${name}\ndescription: ${name} skill\n---\n${body}\n`,
    });
    await p.request('POST', '/agents', { key: owner.key, body: skill('polite', 'Say please.') });
    await p.request('POST', '/agents', { key: owner.key, body: skill('brief', 'Be brief.') });
    await p.request('POST', '/agents', {
      key: owner.key,
      body: { ...summarise({ name: 'skilled', default_skills: ['callco/polite'] }) },
    });
    await p.request('POST', '/agents', {
      key: owner.key,
      body: { ...summarise({ name: 'locked', default_skills: ['callco/polite'], skills_locked: true }) },
    });
    const input = { text: 't', sentences: 1 };
    await call('/callco/skilled/v1/run', input);
    assert.match(fake.calls.at(-1)?.system ?? '', /Say please/);
    await call('/callco/skilled/v1/run', input, { headers: { 'x-platform-skills': 'callco/brief' } });
    assert.match(fake.calls.at(-1)?.system ?? '', /Say please[\s\S]*Be brief/);
    await call('/callco/skilled/v1/run', input, { headers: { 'x-platform-skills-only': 'callco/brief' } });
    assert.doesNotMatch(fake.calls.at(-1)?.system ?? '', /Say please/);
    assert.match(fake.calls.at(-1)?.system ?? '', /Be brief/);
    await call('/callco/skilled/v1/run', input, { headers: { 'x-platform-no-skills': 'true' } });
    assert.doesNotMatch(fake.calls.at(-1)?.system ?? '', /Say please|Be brief/);
    const locked = await call('/callco/locked/v1/run', input, {
      headers: { 'x-platform-no-skills': 'true' },
    });
    assert.match(fake.calls.at(-1)?.system ?? '', /Say please/);
    assert.deepEqual(
      locked.body.warnings.map((w) => w.code),
      ['SKILLS_LOCKED'],
    );
    const unknown = await call('/callco/skilled/v1/run', input, {
      headers: { 'x-platform-skills': 'callco/nope' },
    });
    assert.equal(unknown.status, 400);
  });

  it('refuses malformed call headers with 400 naming the header, before the model is reached', async () => {
    const input = { text: 't', sentences: 1 };
    const before = fake.calls.length;
    for (const [name, value] of [
      ['x-platform-max-hops', '-5'],
      ['x-platform-max-hops', '1e309'],
      ['x-platform-max-hops', '0'],
      ['x-platform-max-hops', 'two'],
      ['x-platform-no-skills', 'yes'],
      ['x-platform-no-skills', '1'],
      ['x-platform-skills', 'callco/brief,not a ref'],
      ['x-platform-skills', 'callco/brief@2'],
      ['x-platform-skills-only', 'sure'],
    ] as const) {
      const res = await call('/callco/summarise/v1/run', input, { headers: { [name]: value } });
      assert.equal(res.status, 400, `${name}: ${value}`);
      const err = errorOf(res as never);
      assert.equal(err.code, 'INVALID_INPUT');
      assert.deepEqual(err.fields, [`header.${name}`], `${name}: ${value}`);
    }
    assert.equal(fake.calls.length, before, 'no call reached the model');
    for (const [name, value] of [
      ['x-platform-max-hops', '3'],
      ['x-platform-no-skills', 'FALSE'],
      ['x-platform-skills-only', 'true'],
    ] as const) {
      const res = await call('/callco/summarise/v1/run', input, { headers: { [name]: value } });
      assert.equal(res.status, 200, `${name}: ${value}: ${res.text}`);
    }
  });
});
