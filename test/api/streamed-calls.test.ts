import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { redactSecrets } from '../../functions/shared/redact-secrets.ts';
import { readEventStream } from '../helpers/event-stream.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * Streamed calls: `Accept: text/event-stream` on the call route, on the local
 * platform over real HTTP, against fake providers that stream in the vendors' own wire formats.
 */

describe('streamed calls (Accept: text/event-stream)', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let key: string;
  let workspace: string;

  /** A streamed call of `agent` (streamco's own unless the path names another org's). */
  const stream = (agent: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${p.url}/${agent.includes('/') ? agent : `streamco/${agent}`}/v1/run`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'text/event-stream',
        ...headers,
      },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  const post = (body: unknown, headers: Record<string, string> = {}) => stream('echo', body, headers);

  /** The call's record in GET /usage/logs, once it is there. */
  const logLineOf = (requestId: string, what: string, timeoutMs?: number) =>
    waitFor(
      what,
      async () => {
        const page = await p.request<{ logs: { request_id: string; status: string; error_code?: string }[] }>(
          'GET',
          '/usage/logs',
          { key },
        );
        return page.body.logs?.find((l) => l.request_id === requestId);
      },
      timeoutMs,
    );

  // On a socket: a client hanging up on a sandboxed tool's stream is seen there; in memory (an aborted
  // Request) the sleeper's run was not ended within 15 s.
  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform({
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
      OPENAI_API_KEY: 'sk-openai-test',
      OPENAI_BASE_URL: fake.baseUrls.openai,
    });
    const o = await createAccount(p.deps, { org: 'streamco', tier: 'pro' });
    key = o.api_key;
    workspace = o.workspace_id;
    const published = await p.request('POST', '/agents', {
      key,
      body: {
        name: 'echo',
        description: 'Echoes.',
        supported_providers: ['openai', 'anthropic'],
        prompt_template: 'Say {{text}}',
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
    });
    assert.equal(published.status, 201, published.text);
  });
  after(async () => {
    await p?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  for (const provider of ['openai', 'anthropic'] as const) {
    it(`streams a prompt agent's answer through ${provider} as it is written, then the plain call's body`, async () => {
      fake.enqueue({
        text: 'Hello streamed world',
        chunks: ['Hello ', 'streamed ', 'world'],
        chunkDelayMs: 300,
      });
      const started = Date.now();
      const res = await post({ text: 'hi' }, { 'x-platform-provider': provider });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      const requestId = res.headers.get('x-request-id');
      const { events } = await readEventStream(res, started);
      const deltas = events.filter((e) => e.event === 'delta');
      assert.deepEqual(
        deltas.map((e) => JSON.parse(e.data).text),
        ['Hello ', 'streamed ', 'world'],
      );
      const last = events.at(-1);
      assert.equal(last?.event, 'result');
      // The first piece arrived while the model was still writing the rest.
      assert.ok((last?.at ?? 0) - (deltas[0]?.at ?? 0) >= 400, JSON.stringify(events.map((e) => e.at)));
      const result = JSON.parse(last?.data ?? '{}');
      assert.equal(result.metadata.request_id, requestId);
      assert.equal(fake.calls[0]?.body.stream, true, 'the model was asked to stream');

      // Exactly the body a plain call of the same input returns.
      fake.enqueue({ text: 'Hello streamed world' });
      const plain = await p.request<Record<string, unknown>>('POST', '/streamco/echo/v1/run', {
        key,
        body: { text: 'hi' },
        headers: { 'x-platform-provider': provider },
      });
      assert.equal(plain.status, 200, plain.text);
      const strip = (b: { metadata: Record<string, unknown> }) => ({
        ...b,
        metadata: {
          ...b.metadata,
          request_id: undefined,
          processing_time_ms: undefined,
          trace_id: undefined,
        },
      });
      assert.deepEqual(strip(result), strip(plain.body as never));
      // Each call is its own trace, named in its result as in the plain call's body.
      assert.match(result.metadata.trace_id, /^[0-9a-f]{32}$/);
    });
  }

  it('sends the result event only once the call’s record is written, so a caller reading it on that event finds it', async () => {
    // The record's write (its log line and its record; a streamed call's slot goes once it is
    // delivered) held until the result event arrives, or a second has passed: a result sent
    // before the write fails the test.
    const store = p.deps.store;
    const writeEach = store.writeEach;
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let recorded = false;
    store.writeEach = async (ops) => {
      if (!ops.some((op) => 'put' in op && 'http_status' in op.put)) return writeEach.call(store, ops);
      await held;
      const failed = await writeEach.call(store, ops);
      recorded = true;
      return failed;
    };
    try {
      fake.enqueue({ text: 'Hello streamed world', chunks: ['Hello ', 'streamed ', 'world'] });
      const started = Date.now();
      const res = await post({ text: 'hi' }, { 'x-platform-provider': 'openai' });
      assert.equal(res.status, 200);
      const requestId = res.headers.get('x-request-id');
      const grace = setTimeout(release, 1000);
      let recordedAtResult: boolean | undefined;
      const { events } = await readEventStream(res, started, (e) => {
        if (e.event === 'result') {
          recordedAtResult = recorded;
          release();
        }
        return undefined;
      });
      clearTimeout(grace);
      assert.equal(events.at(-1)?.event, 'result');
      assert.equal(recordedAtResult, true, 'the result event came before the call’s record was written');
      // Read at once, with no wait: the record the answer promised is there.
      const page = await p.request<{ logs: { request_id: string; status: string }[] }>('GET', '/usage/logs', {
        key,
      });
      assert.equal(page.body.logs.find((l) => l.request_id === requestId)?.status, 'success');
    } finally {
      store.writeEach = writeEach;
      release();
    }
  });

  it('refuses before the first byte with the ordinary JSON answers', async () => {
    const invalid = await post({ wrong: 1 });
    assert.equal(invalid.status, 400);
    assert.match(invalid.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(((await invalid.json()) as { error: { code: string } }).error.code, 'INVALID_INPUT');
    const keyless = await post({ text: 'hi' }, { authorization: 'Bearer ahk_nope' });
    assert.equal(keyless.status, 401);
    assert.match(keyless.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(fake.calls.length, 0, 'no model request for a refused call');
  });

  it('ends with an error event carrying the envelope when the model fails mid-stream', async () => {
    fake.enqueue({
      text: 'one two three',
      chunks: ['one ', 'two ', 'three'],
      chunkDelayMs: 50,
      failAfterChunks: 1,
    });
    const started = Date.now();
    const res = await post({ text: 'hi' }, { 'x-platform-provider': 'openai' });
    assert.equal(res.status, 200);
    const { events } = await readEventStream(res, started);
    assert.deepEqual(
      events.map((e) => e.event),
      ['delta', 'error'],
    );
    const envelope = JSON.parse(events[1]?.data ?? '{}');
    assert.equal(envelope.error.code, 'LLM_ERROR');
    assert.equal(envelope.metadata.request_id, res.headers.get('x-request-id'));
  });

  it('stops the model request at once when the client hangs up, and records the call', async () => {
    fake.enqueue({ text: 'a b c d e f', chunks: ['a ', 'b ', 'c ', 'd ', 'e ', 'f'], chunkDelayMs: 1000 });
    const started = Date.now();
    const res = await post({ text: 'hi' }, { 'x-platform-provider': 'openai' });
    const requestId = res.headers.get('x-request-id') as string;
    const { events } = await readEventStream(res, started, (e) => e.event === 'delta');
    assert.equal(events.length, 1);
    const outcome = await Promise.race([
      fake.calls[0]?.settled,
      new Promise((resolve) => setTimeout(() => resolve('still streaming'), 2500)),
    ]);
    assert.equal(outcome, 'disconnected', 'the model request was cut when the caller went away');
    const logged = await logLineOf(requestId, 'the call’s log line');
    assert.equal(logged.status, 'timeout');
    assert.equal(logged.error_code, 'TIMEOUT');
  });

  it('reports each tool call of a managed loop as a step, then its result', async () => {
    const published = await p.request('POST', '/agents?allow_no_secrets=true', {
      key,
      body: {
        name: 'looper',
        type: 'agent',
        description: 'Runs a command, then submits.',
        supported_providers: ['anthropic'],
        required_secrets: [],
        prompt_template: 'Go.',
      },
    });
    assert.equal(published.status, 201, published.text);
    fake.enqueue(
      { toolCalls: [{ name: 'bash', input: { command: 'echo step-one' } }] },
      { toolCalls: [{ name: 'submit_result', input: { done: true } }] },
    );
    const started = Date.now();
    const res = await stream('looper', {});
    assert.equal(res.status, 200);
    const { events } = await readEventStream(res, started);
    const steps = events.filter((e) => e.event === 'step').map((e) => JSON.parse(e.data));
    assert.deepEqual(
      steps.map(({ kind, name, outcome }) => ({ kind, name, outcome })),
      [
        { kind: 'tool', name: 'bash', outcome: 'ok' },
        { kind: 'tool', name: 'submit_result', outcome: 'ok' },
      ],
    );
    for (const step of steps) assert.ok(Number.isInteger(step.duration_ms));
    assert.equal(events.at(-1)?.event, 'result');
    assert.deepEqual(JSON.parse(events.at(-1)?.data ?? '{}').data, { done: true });
  });

  it('redacts a workspace secret from a managed loop’s streamed words, split or whole, and from its error event', async () => {
    // A member's streamed call must not show a secret its result redacts.
    const secret = 'open sesame: 4242/zz+Q?ü';
    const put = await p.request('PUT', `/workspaces/${workspace}/secrets`, {
      key,
      body: { name: 'STREAM_TOKEN', value: secret },
    });
    assert.ok(put.status < 300, put.text);
    const published = await p.request<{ id: string }>('POST', '/agents', {
      key,
      body: {
        name: 'keeper',
        type: 'agent',
        description: 'Holds a secret.',
        supported_providers: ['anthropic'],
        required_secrets: ['STREAM_TOKEN'],
        prompt_template: 'Go.',
      },
    });
    assert.equal(published.status, 201, published.text);
    const forms = {
      plain: secret,
      base64: Buffer.from(`ab${secret}`).toString('base64'),
      hex: Buffer.from(secret).toString('hex'),
    };
    const text = `plain ${forms.plain}, base64 ${forms.base64}, hex ${forms.hex}. Done.`;
    fake.enqueue({ text, toolCalls: [{ name: 'submit_result', input: { note: secret } }] });
    const res = await stream('keeper', {});
    assert.equal(res.status, 200);
    const { events } = await readEventStream(res, Date.now());
    assert.equal(events.at(-1)?.event, 'result', JSON.stringify(events));
    const deltas = events.filter((e) => e.event === 'delta').map((e) => JSON.parse(e.data).text as string);
    const joined = deltas.join('');
    // The text the plain answer's redaction makes of it: every form replaced.
    assert.equal(joined, redactSecrets(text, { STREAM_TOKEN: secret }));
    assert.equal(joined.match(/\[REDACTED\]/g)?.length, 3, joined);
    const stable = Buffer.from(`ab${secret}`).toString('base64').slice(4, 28);
    for (const sent of [...deltas, joined, ...events.map((e) => e.data)]) {
      for (const form of [forms.plain, forms.hex, stable]) assert.ok(!sent.includes(form), sent);
    }
    assert.deepEqual(JSON.parse(events.at(-1)?.data ?? '{}').data, { note: '[REDACTED]' });

    // A provider error quoting what it was sent: its words never reach the error event (a fixed
    // message), and the owner's log line has them with the secret redacted.
    fake.enqueue({ status: 400, errorMessage: `cannot read tool result "${secret}"` });
    const failed = await stream('keeper', {});
    assert.equal(failed.status, 200);
    const { events: failure } = await readEventStream(failed, Date.now());
    assert.equal(failure.at(-1)?.event, 'error');
    const envelope = failure.at(-1)?.data ?? '';
    assert.equal(JSON.parse(envelope).error.code, 'LLM_ERROR');
    assert.ok(!envelope.includes(secret) && !envelope.includes('cannot read tool result'), envelope);
    const line = await waitFor('the provider’s words in the owner’s log', async () => {
      const page = await p.request<{ logs: { message: string }[] }>(
        'GET',
        `/agents/${published.body.id}/logs`,
        { key },
      );
      return page.body.logs?.find((l) => l.message.includes('cannot read tool result'));
    });
    assert.ok(!line.message.includes(secret) && line.message.includes('[REDACTED]'), line.message);
  });

  it('stops a tool agent’s sandbox run at once when the client hangs up', async () => {
    const published = await p.request('POST', '/agents?allow_no_secrets=true', {
      key,
      body: {
        name: 'sleeper',
        type: 'tool',
        description: 'Sleeps.',
        supported_providers: ['any'],
        required_secrets: [],
        runtime: { command: 'sleep 30' },
      },
    });
    assert.equal(published.status, 201, published.text);
    const gone = new AbortController();
    const started = Date.now();
    const res = await stream('sleeper', {}, {}, gone.signal);
    assert.equal(res.status, 200, 'the stream opened: the run has started');
    const requestId = res.headers.get('x-request-id') as string;
    gone.abort();
    // Recorded as ended by its caller long before the command's 30 s.
    const logged = await logLineOf(requestId, 'the abandoned run’s log line', 15_000);
    assert.equal(logged.status, 'timeout');
    assert.ok(Date.now() - started < 15_000, 'the run did not go on to its end');
  });

  it('refuses another tenant’s private agent before the stream, as a plain call does, running nothing', async () => {
    const other = await createAccount(p.deps, { org: 'otherco', tier: 'pro' });
    const published = await p.request('POST', '/agents', {
      key: other.api_key,
      body: {
        name: 'private-one',
        description: 'Private.',
        supported_providers: ['openai'],
        prompt_template: 'Say {{text}}',
      },
    });
    assert.equal(published.status, 201, published.text);
    const res = await stream('otherco/private-one', { text: 'hi' });
    const plain = await p.request('POST', '/otherco/private-one/v1/run', { key, body: { text: 'hi' } });
    assert.equal(res.status, plain.status);
    assert.ok(res.status === 403 || res.status === 404, String(res.status));
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const body = (await res.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, errorOf(plain).code);
    assert.equal(fake.calls.length, 0, 'nothing ran');
  });
});
