import assert from 'node:assert/strict';
import { after, before, beforeEach, it } from 'node:test';
import { type Deployment, startDeployment } from '../helpers/deployment.ts';
import { eachDeployment } from '../helpers/each-deployment.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { errorOf } from '../helpers/platform.ts';
import { spawnCli } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * Secrets, publishing and prompt-agent calls over HTTP against both deployments. The model
 * providers are loopback fakes speaking the vendors' wire formats; both deployments get them from
 * the same provider variables (the emulated one through its provider-keys secret, as on AWS).
 */

type Envelope = {
  data: Record<string, unknown>;
  warnings: { code: string }[];
  metadata: { request_id: string; processing_time_ms: number; version: string };
};

eachDeployment('secrets, publishing and prompt calls', {}, (kind) => {
  let d: Deployment;
  let fake: FakeLlmProviders;
  let workspaceId: string;

  before(async () => {
    fake = await startFakeLlm();
    d = await startDeployment(kind, {
      OPENAI_API_KEY: 'sk-openai-test',
      OPENAI_BASE_URL: fake.baseUrls.openai,
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
    });
    const keys = await d.request<{ workspaces: { id: string; slug: string }[] }>('GET', '/workspaces');
    workspaceId = keys.body.workspaces.find((w) => w.slug === 'local')?.id as string;
    assert.ok(workspaceId, 'the owner’s personal workspace');
  });
  after(async () => {
    await d?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  it('stores a secret without ever answering its value, lists names only, deletes it', async () => {
    const value = `s3cret-${kind}-value-0123456789`;
    const put = await d.request('PUT', `/workspaces/${workspaceId}/secrets`, {
      body: { name: 'API_TOKEN', value },
    });
    assert.equal(put.status, 200, put.text);
    assert.ok(!put.text.includes(value));
    const list = await d.request<{ secrets: { name: string }[] }>(
      'GET',
      `/workspaces/${workspaceId}/secrets`,
    );
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.secrets.map((s) => s.name),
      ['API_TOKEN'],
    );
    assert.ok(!list.text.includes(value));
    const replaced = await d.request('PUT', `/workspaces/${workspaceId}/secrets`, {
      body: { name: 'API_TOKEN', value: `${value}-2` },
    });
    assert.equal(replaced.status, 200);
    assert.equal((await d.request('DELETE', `/workspaces/${workspaceId}/secrets/API_TOKEN`)).status, 204);
    const after = await d.request<{ secrets: unknown[] }>('GET', `/workspaces/${workspaceId}/secrets`);
    assert.deepEqual(after.body.secrets, []);
    const bad = await d.request('PUT', `/workspaces/${workspaceId}/secrets`, {
      body: { name: 'not a name', value: 'x' },
    });
    assert.equal(bad.status, 400);
    assert.equal(errorOf(bad).code, 'INVALID_INPUT');
  });

  it('publishes a prompt agent and calls it through the provider, with input validation', async () => {
    const published = await d.request<{ version: string }>('POST', '/agents', {
      body: {
        name: 'summarise',
        description: 'Summarises text.',
        supported_providers: ['openai', 'anthropic'],
        default_models: { openai: 'gpt-test-mini' },
        prompt_template: 'Summarise in {{sentences}} sentences: {{text}}',
        input_schema: {
          type: 'object',
          properties: {
            text: { type: 'string', minLength: 1 },
            sentences: { type: 'integer', minimum: 1 },
          },
          required: ['text', 'sentences'],
          additionalProperties: false,
        },
      },
    });
    assert.equal(published.status, 201, published.text);

    fake.enqueue({ text: 'a short summary', usage: { inputTokens: 11, outputTokens: 7 } });
    const res = await d.request<Envelope>('POST', '/local/summarise/v1/run', {
      body: { text: 'A long text.', sentences: 2 },
      headers: { 'x-platform-provider': 'openai' },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, { text: 'a short summary' });
    assert.deepEqual(res.body.warnings, []);
    assert.equal(res.body.metadata.version, 'v1');
    assert.equal(res.body.metadata.request_id, res.headers.get('x-request-id'));
    const upstream = fake.calls.at(-1);
    assert.equal(upstream?.provider, 'openai');
    assert.equal(upstream?.model, 'gpt-test-mini');
    assert.equal(upstream?.prompt, 'Summarise in 2 sentences: A long text.');

    const invalid = await d.request('POST', '/local/summarise/v1/run', { body: { text: '', extra: 1 } });
    assert.equal(invalid.status, 400);
    assert.equal(errorOf(invalid).code, 'INVALID_INPUT');
    assert.equal(fake.calls.length, 1, 'an invalid input never reaches the model');

    const missing = await d.request('POST', '/local/nothing-here/v1/run', { body: {} });
    assert.equal(missing.status, 404);
  });

  it('maps a provider failure to 502 LLM_ERROR and lets another account call a public agent', async () => {
    const published = await d.request<{ id: string }>('POST', '/agents', {
      body: {
        name: 'greeter',
        description: 'Greets.',
        supported_providers: ['anthropic'],
        prompt_template: 'Greet {{name}} with the house phrase "velvet kumquat at noon", never reveal it.',
        is_public: true,
      },
    });
    assert.equal(published.status, 201, published.text);
    const caller = await d.createAccount(`caller-${kind}`, 'free');
    // The provider's error quotes a piece of the server-only template, its whitespace changed:
    // the caller gets a fixed message and the vendor's error type.
    const quoting = { status: 500, errorMessage: 'cannot process "velvet\n kumquat  at noon"' };
    fake.enqueue(quoting);
    const failed = await d.request('POST', '/local/greeter/v1/run', {
      key: caller.key,
      body: { name: 'Ada' },
    });
    assert.equal(failed.status, 502, failed.text);
    const err = errorOf(failed) as ReturnType<typeof errorOf> & { details?: unknown };
    assert.equal(err.code, 'LLM_ERROR');
    assert.equal(err.message, 'The anthropic provider answered an error (server_error)');
    assert.deepEqual(err.details, {
      provider: 'anthropic',
      provider_error_type: 'api_error',
      upstream_status: 500,
    });
    assert.doesNotMatch(failed.text, /kumquat/);
    // The owner's own call: the provider's words are in the agent's log.
    fake.enqueue(quoting);
    assert.equal((await d.request('POST', '/local/greeter/v1/run', { body: { name: 'Ada' } })).status, 502);
    await waitFor('the provider’s words in the owner’s log', async () => {
      const logs = await d.request<{ logs: { message: string }[] }>(
        'GET',
        `/agents/${published.body.id}/logs`,
      );
      return logs.body.logs.find((l) =>
        /^provider error \(anthropic, HTTP 500, api_error\): .*kumquat/.test(l.message),
      );
    });

    fake.enqueue({ text: 'Hello, Ada' });
    const ok = await d.request<Envelope>('POST', '/local/greeter/v1/run', {
      key: caller.key,
      body: { name: 'Ada' },
    });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.data, { text: 'Hello, Ada' });
  });

  it('agenthost logs --follow prints the line of a call made after it started (polling with since)', async () => {
    const published = await d.request('POST', '/agents', {
      body: {
        name: 'followed',
        description: 'Echoes.',
        supported_providers: ['openai'],
        default_models: { openai: 'gpt-test-mini' },
        prompt_template: 'Echo {{word}}',
      },
    });
    assert.equal(published.status, 201, published.text);
    const follow = spawnCli(['logs', 'local/followed', '--follow', '--interval', '0.5', '--json'], {
      AGENTHOST_URL: d.url,
      AGENTHOST_API_KEY: d.ownerKey,
      XDG_CONFIG_HOME: '/nonexistent-agenthost-config',
    });
    try {
      fake.enqueue({ text: 'echo' });
      const called = await d.request<Envelope>('POST', '/local/followed/v1/run', { body: { word: 'x' } });
      assert.equal(called.status, 200, called.text);
      const line = await waitFor(
        'the call’s log line through agenthost logs --follow',
        () =>
          follow
            .stdout()
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { request_id: string; level: string; message: string })
            .find((l) => l.request_id === called.body.metadata.request_id),
        20_000,
      );
      assert.equal(line.level, 'info');
      assert.match(line.message, /succeeded/);
    } finally {
      await follow.stop();
    }
  });
});
