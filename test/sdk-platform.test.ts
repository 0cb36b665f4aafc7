import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Middleware } from 'openapi-fetch';
import { createAccount } from '../functions/core/accounts/account.ts';
import { buildOpenApi } from '../functions/platform/openapi.ts';
import { type AgentHostClient, type AgentHostError, createClient } from '../sdk/src/index.ts';
import { type FakeLlmProviders, start as startFakeLlm } from './helpers/fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from './helpers/platform.ts';

type Json = Record<string, unknown>;
const doc = buildOpenApi() as {
  paths: Record<string, Record<string, { responses: Record<string, Json> }>>;
  components: Json;
};
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

/**
 * Checks every answer the SDK receives against the schema /openapi.json documents for that
 * operation and status: the document is true as served, not only valid.
 */
function conformance(problems: string[]): Middleware {
  return {
    async onResponse({ schemaPath, request, response }) {
      const op = doc.paths[schemaPath]?.[request.method.toLowerCase()];
      const documented = op?.responses[String(response.status)] as
        | { content?: Record<string, { schema: Json }> }
        | undefined;
      if (!documented)
        return void problems.push(`${request.method} ${schemaPath}: ${response.status} not documented`);
      const schema = documented.content?.['application/json']?.schema;
      if (!schema) return;
      const validate = ajv.compile({ ...schema, components: doc.components });
      if (!validate(await response.clone().json()))
        problems.push(
          `${request.method} ${schemaPath} ${response.status}: ${ajv.errorsText(validate.errors)}`,
        );
    },
  };
}

describe('the SDK against the local platform', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let client: AgentHostClient;
  let workspaceId: string;
  const problems: string[] = [];

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform({
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
    });
    const account = await createAccount(p.deps, { org: 'sdkco', tier: 'pro' });
    client = createClient({ baseUrl: p.url, apiKey: account.api_key, retry: false });
    client.api.use(conformance(problems));
    workspaceId = (await client.workspaces.list()).workspaces[0]!.id;
  });
  after(async () => {
    await p.close();
    await fake.close();
  });

  it('tasks: create, get, update, complete, list by pages, delete', async () => {
    const created = await client.tasks.create({ title: 'first', priority: 'high', due_date: '2030-01-02' });
    assert.equal(created.status, 'open');
    assert.equal((await client.tasks.get(created.id)).title, 'first');
    assert.equal((await client.tasks.update(created.id, { status: 'in_progress' })).status, 'in_progress');
    assert.ok((await client.tasks.complete(created.id)).completed_at);
    for (const n of [2, 3, 4, 5]) await client.tasks.create({ title: `task ${n}` });
    const titles: string[] = [];
    for await (const t of client.tasks.iterate({}, 2)) titles.push(t.title);
    assert.equal(titles.length, 5, 'three pages of two');
    await client.tasks.delete(created.id);
    await assert.rejects(
      client.tasks.get(created.id),
      (err: AgentHostError) => err.code === 'NOT_FOUND' && err.status === 404,
    );
  });

  it('workspaces and secrets: create, list members, put, list and delete a secret', async () => {
    const ws = await client.workspaces.create({ name: 'Team SDK' });
    assert.equal((await client.workspaces.members(ws.id)).members.length, 1);
    await client.secrets.put(ws.id, { name: 'SDK_TOKEN', value: 's3cret' });
    const names = (await client.secrets.list(ws.id)).secrets.map((s) => s.name);
    assert.deepEqual(names, ['SDK_TOKEN']);
    await client.secrets.delete(ws.id, 'SDK_TOKEN');
    assert.equal((await client.secrets.list(ws.id)).secrets.length, 0);
  });

  it('agents and the public directory: publish, get, list, details, typed calls, files', async () => {
    const published = await client.agents.publish({
      name: 'summarise',
      description: 'Summarises text.',
      supported_providers: ['anthropic'],
      is_public: true,
      prompt_template: 'Summarise: {{text}}',
      input_schema: {
        type: 'object',
        properties: { text: { type: 'string' } },
        required: ['text'],
      },
      output_schema: { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'] },
    });
    assert.equal(published.ref, 'sdkco/summarise/v1');
    assert.equal((await client.agents.get(published.id)).execution_engine, 'direct_llm');
    const mine = [];
    for await (const a of client.agents.iterate()) mine.push(a.name);
    assert.deepEqual(mine, ['summarise']);
    const details = await client.public.get('sdkco', 'summarise', 'v1');
    assert.deepEqual(details.output_schema, published.output_schema);
    const listed = [];
    for await (const a of client.public.iterate()) listed.push(a.ref);
    assert.deepEqual(listed, ['sdkco/summarise/v1']);

    fake.enqueue({ text: JSON.stringify({ summary: 'short' }) });
    const summarise = client.agents.typed<{ text: string }, { summary: string }>('sdkco/summarise@v1');
    const result = await summarise({ text: 'A long text.' }, { timeoutMs: 60_000, tenant: 'tenant-a' });
    const summary: string = result.data.summary;
    assert.equal(summary, 'short');
    assert.equal(result.metadata.version, 'v1');

    await client.agents.publish({
      name: 'reader',
      description: 'Reads files.',
      supported_providers: ['anthropic'],
      prompt_template: 'Read {{files}} for {{purpose}}',
      output_schema: { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'] },
    });
    const dir = p.dataDir;
    await writeFile(join(dir, 'note.txt'), 'file from a path');
    for (const [label, files] of [
      ['a path', [join(dir, 'note.txt')]],
      [
        'bytes and a stream',
        [
          { name: 'a.txt', data: Buffer.from('bytes file') },
          { name: 'b.txt', data: Readable.from(['stream file']) },
        ],
      ],
    ] as const) {
      fake.enqueue({ text: JSON.stringify({ summary: label }) });
      const withFiles = await client.agents.call<{ purpose: string }, { summary: string }>(
        'sdkco/reader@v1',
        { purpose: 'testing' },
        { files: [...files] },
      );
      assert.equal(withFiles.data.summary, label);
    }
    const prompts = fake.calls.slice(-2).map((c) => c.prompt);
    assert.match(prompts[0] ?? '', /file from a path/);
    assert.match(prompts[1] ?? '', /bytes file/);
    assert.match(prompts[1] ?? '', /stream file/);

    await assert.rejects(
      client.agents.call('sdkco/summarise@v1', { text: 'x' }, { deadline: p.clock.now().getTime() - 1000 }),
      (err: AgentHostError) => err.code === 'TIMEOUT',
      'the deadline travels as X-Platform-Deadline-Ms',
    );
    await assert.rejects(
      client.agents.call('sdkco/summarise@v1', { text: 'x' }, { maxHops: 0 }),
      (err: AgentHostError) =>
        err.code === 'INVALID_INPUT' && JSON.stringify(err.details).includes('max-hops'),
    );
  });

  it('schedules: create, list by pages, trigger', async () => {
    const created = await client.schedules.create(workspaceId, {
      agent: 'sdkco/summarise',
      cron_expression: '0 9 * * 1',
      input_data: { text: 'weekly' },
    });
    assert.equal((await client.schedules.get(workspaceId, created.id)).cron_expression, '0 9 * * 1');
    const ids = [];
    for await (const s of client.schedules.iterate(workspaceId)) ids.push(s.id);
    assert.deepEqual(ids, [created.id]);
    fake.enqueue({ text: JSON.stringify({ summary: 'triggered' }) });
    const run = await client.schedules.trigger(workspaceId, created.id);
    assert.equal(run.status, 'success');
    assert.deepEqual(run.output, { summary: 'triggered' });
  });

  it('api keys and usage: create, list, delete a key; usage totals and call records by cursor', async () => {
    const key = await client.apiKeys.create({ name: 'ci' });
    assert.ok(key.api_key.startsWith('ahk_'));
    assert.ok((await client.apiKeys.list()).api_keys.some((k) => k.id === key.id));
    await client.apiKeys.delete(key.id);
    assert.ok(!(await client.apiKeys.list()).api_keys.some((k) => k.id === key.id));

    const summary = await client.usage.summary();
    assert.ok(summary.totals.calls >= 3, JSON.stringify(summary));
    const records = [];
    for await (const r of client.usage.iterateLogs({ limit: 1 })) records.push(r);
    assert.equal(records.length, summary.totals.calls);
  });

  it('answered every request as /openapi.json documents it', () => {
    assert.deepEqual(problems, []);
  });
});
