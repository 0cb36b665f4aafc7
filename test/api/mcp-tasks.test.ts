import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  RELATED_TASK_META_KEY,
} from '@modelcontextprotocol/sdk/types.js';
import { issueServiceKey } from '../../functions/core/calls/service-keys.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { connectMcp, postMcpAs, startTask, toolErrorOf } from '../helpers/mcp-client.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * MCP tasks (docs/mcp.md, "Tasks") with the SDK's own client and its experimental tasks helpers,
 * over loopback: a tool call made a task is its agent call started as a run, the task's id the
 * run's; tasks/get, tasks/result, tasks/list and tasks/cancel read the runs store, for the caller's
 * account alone.
 */

type RunDoc = {
  run_id: string;
  status: string;
  request_id: string;
  cancel_requested_at: string | null;
  result: { status: number; body: Record<string, unknown> } | null;
};

const summariseArgs = { text: 'A long text.', sentences: 2 };

describe('POST /mcp: tool calls as tasks, over runs', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let alpha: { key: string; accountId: string };
  let bravo: { key: string; accountId: string };
  const clients: Client[] = [];

  const connect = async (key: string) => {
    const client = await connectMcp(p.url, key);
    clients.push(client);
    return client;
  };
  const getRun = async (id: string, key = alpha.key) =>
    (await p.request<RunDoc>('GET', `/runs/${id}`, { key })).body;
  /** A model answer held until `release` is called; `asked` resolves once the model was asked. */
  const held = (text: string) => {
    let release!: () => void;
    let asked!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const reached = new Promise<void>((resolve) => {
      asked = resolve;
    });
    fake.setResponder(async () => {
      asked();
      await gate;
      return { text };
    });
    return { release, reached };
  };
  /** Starts a task-augmented call of the tool; its CreateTaskResult's task. */

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform({ OPENAI_API_KEY: 'sk-openai-test', OPENAI_BASE_URL: fake.baseUrls.openai });
    alpha = await p.createAccount('task-alpha', 'pro');
    bravo = await p.createAccount('task-bravo', 'pro');
    const res = await p.request('POST', '/agents?allow_no_secrets=true', {
      key: alpha.key,
      body: {
        name: 'summarise',
        description: 'Summarises text.',
        supported_providers: ['openai'],
        default_models: { openai: 'gpt-test-mini' },
        prompt_template: 'Summarise in {{sentences}} sentences: {{text}}',
        input_schema: {
          type: 'object',
          properties: { text: { type: 'string', minLength: 1 }, sentences: { type: 'integer', minimum: 1 } },
          required: ['text', 'sentences'],
        },
      },
    });
    assert.equal(res.status, 201, res.text);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await p?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  it('declares the tasks capability, and every tool may be called as a task', async () => {
    const client = await connect(alpha.key);
    assert.deepEqual(client.getServerCapabilities()?.tasks, {
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => [t.name, t.execution]),
      [['task-alpha__summarise', { taskSupport: 'optional' }]],
    );
  });

  it('runs a long tool call as a task: working while it runs, then completed with the plain call’s result', async () => {
    const client = await connect(alpha.key);
    const gate = held('a short summary');
    const task = await startTask(client, 'task-alpha__summarise', summariseArgs);
    assert.equal(task.status, 'working');
    assert.equal(task.pollInterval, 1000);
    assert.equal(task.ttl, 90 * 86_400_000);
    await gate.reached;

    // The task is the run: its id, and the run is running.
    const run = await getRun(task.taskId);
    assert.equal(run.run_id, task.taskId);
    assert.equal(run.status, 'running');
    const working = await client.experimental.tasks.getTask(task.taskId);
    assert.equal(working.status, 'working');
    assert.match(working.statusMessage ?? '', new RegExp(`/runs/${task.taskId}/events`));
    const listed = await client.experimental.tasks.listTasks();
    assert.ok(listed.tasks.some((t) => t.taskId === task.taskId && t.status === 'working'));

    // tasks/result waits for the run's end.
    const result = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    gate.release();
    const answer = await result;
    assert.equal(answer.isError, undefined, JSON.stringify(answer));
    assert.deepEqual(answer.structuredContent, { text: 'a short summary' });
    assert.deepEqual(answer._meta?.[RELATED_TASK_META_KEY], { taskId: task.taskId });
    const meta = answer._meta?.['agenthost/call'] as { request_id: string; version: string };
    const ended = await getRun(task.taskId);
    assert.equal(ended.status, 'succeeded');
    assert.equal(meta.request_id, ended.request_id);
    assert.equal(meta.version, 'v1');
    assert.equal((await client.experimental.tasks.getTask(task.taskId)).status, 'completed');

    // The same call made plainly answers the same content.
    fake.setResponder(() => ({ text: 'a short summary' }));
    const plain = await client.callTool({ name: 'task-alpha__summarise', arguments: summariseArgs });
    assert.deepEqual(plain.content, answer.content);
    assert.deepEqual(plain.structuredContent, answer.structuredContent);
    const plainMeta = plain._meta?.['agenthost/call'] as Record<string, unknown>;
    assert.deepEqual(Object.keys(plainMeta).sort(), Object.keys(meta).sort());

    // Its events were logged as a run's, for a client that follows it.
    const events = await p.request<{ events: { event: string }[]; ended: boolean }>(
      'GET',
      `/runs/${task.taskId}/events`,
      { key: alpha.key },
    );
    assert.equal(events.body.ended, true);
    assert.equal(events.body.events.at(-1)?.event, 'result');
  });

  it('polls a task to its end with the SDK’s callToolStream, and a failed call is a failed task with the plain call’s tool error', async () => {
    const client = await connect(alpha.key);
    await client.listTools(); // the SDK's client learns which tools may be tasks
    fake.setResponder(() => ({ text: 'streamed summary', delayMs: 300 }));
    const messages: { type: string; status?: string }[] = [];
    let final: Record<string, unknown> | undefined;
    for await (const m of client.experimental.tasks.callToolStream({
      name: 'task-alpha__summarise',
      arguments: summariseArgs,
    })) {
      messages.push({ type: m.type, ...('task' in m ? { status: m.task.status } : {}) });
      if (m.type === 'result') final = m.result;
    }
    assert.equal(messages[0]?.type, 'taskCreated');
    assert.equal(messages.at(-1)?.type, 'result');
    assert.equal(messages.at(-2)?.status, 'completed');
    assert.deepEqual(final?.structuredContent, { text: 'streamed summary' });

    // The model fails: the plain call's tool error, from the task's result.
    fake.setResponder(() => ({ status: 500 }));
    const plain = await client.callTool({ name: 'task-alpha__summarise', arguments: summariseArgs });
    const task = await startTask(client, 'task-alpha__summarise', summariseArgs);
    const failed = await waitFor('the task to fail', async () => {
      const t = await client.experimental.tasks.getTask(task.taskId);
      return t.status === 'working' ? undefined : t;
    });
    assert.equal(failed.status, 'failed');
    assert.match(failed.statusMessage ?? '', /^LLM_ERROR: /);
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    const error = toolErrorOf(result);
    assert.equal(error.code, 'LLM_ERROR');
    assert.deepEqual(error, { ...toolErrorOf(plain), message: error.message });
    assert.equal(result.structuredContent, undefined);
    const run = await getRun(task.taskId);
    assert.equal(run.status, 'failed');
    assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), run.result?.body);
  });

  it('cancels a task in the middle: the run stops and ends cancelled, and a second cancel is refused', async () => {
    const client = await connect(alpha.key);
    const gate = held('never sent');
    const task = await startTask(client, 'task-alpha__summarise', summariseArgs);
    await gate.reached;
    const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.taskId, task.taskId);
    const run = await waitFor('the run to end', async () => {
      const r = await getRun(task.taskId);
      return r.status === 'running' ? undefined : r;
    });
    assert.equal(run.status, 'cancelled');
    assert.ok(run.cancel_requested_at);
    assert.equal((await client.experimental.tasks.getTask(task.taskId)).status, 'cancelled');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    const error = toolErrorOf(result) as { code: string; details?: { reason?: string } };
    assert.equal(error.code, 'TIMEOUT');
    assert.equal(error.details?.reason, 'cancelled');
    gate.release();

    await assert.rejects(client.experimental.tasks.cancelTask(task.taskId), (err) => {
      assert.ok(err instanceof McpError);
      assert.equal(err.code, ErrorCode.InvalidParams);
      assert.match(err.message, /terminal status: cancelled/);
      return true;
    });
  });

  it('refuses another account’s task as one that does not exist, and lists only the caller’s', async () => {
    const client = await connect(alpha.key);
    fake.setResponder(() => ({ text: 'mine' }));
    const task = await startTask(client, 'task-alpha__summarise', summariseArgs);
    const other = await connect(bravo.key);
    const notFound = (err: unknown) => {
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.code, ErrorCode.InvalidParams);
      assert.match(err.message, /Task not found/);
      return true;
    };
    await assert.rejects(other.experimental.tasks.getTask(task.taskId), notFound);
    await assert.rejects(other.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema), notFound);
    await assert.rejects(other.experimental.tasks.cancelTask(task.taskId), notFound);
    await assert.rejects(other.experimental.tasks.getTask('0193a5c2-0000-7000-8000-000000000000'), notFound);
    assert.deepEqual((await other.experimental.tasks.listTasks()).tasks, []);
    // Untouched: still the caller's, and it ends as it would.
    await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    assert.equal((await getRun(task.taskId)).status, 'succeeded');
  });

  it('answers a task with a progress token as JSON (its progress is its run’s events), and refuses a cursor not its own', async () => {
    fake.setResponder(() => ({ text: 'quick' }));
    const res = await postMcpAs(
      p.url,
      alpha.key,
      {},
      {
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: {
          name: 'task-alpha__summarise',
          arguments: summariseArgs,
          task: {},
          _meta: { progressToken: 'p9' },
        },
      },
    );
    assert.equal(res.status, 200, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const { task } = JSON.parse(res.body).result as { task: { taskId: string; status: string } };
    assert.equal(task.status, 'working');
    const client = await connect(alpha.key);
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    assert.deepEqual(result.structuredContent, { text: 'quick' });

    await assert.rejects(client.experimental.tasks.listTasks('not-a-cursor'), (err) => {
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.code, ErrorCode.InvalidParams);
      return true;
    });
  });

  it('answers a call refused before it runs as a JSON-RPC error carrying the platform’s error, starting no run', async () => {
    const client = await connect(alpha.key);
    const before = (await p.request<{ runs: unknown[] }>('GET', '/runs', { key: alpha.key })).body.runs
      .length;
    await assert.rejects(startTask(client, 'task-alpha__summarise', { text: '' }), (err) => {
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.code, ErrorCode.InvalidParams);
      const data = err.data as { error: { code: string }; metadata: { request_id: string } };
      assert.equal(data.error.code, 'INVALID_INPUT');
      assert.match(data.metadata.request_id, /^req_/);
      return true;
    });
    const afterRuns = (await p.request<{ runs: unknown[] }>('GET', '/runs', { key: alpha.key })).body.runs;
    assert.equal(afterRuns.length, before);
    assert.equal(fake.calls.length, 0);
  });

  it('refuses a run credential on the tasks requests as on every MCP request (401)', async () => {
    const issued = await issueServiceKey(p.deps, alpha.accountId, {
      run_id: 'req_test',
      orchestrator: 'task-alpha/summarise/v1',
      dependencies: [],
      hops_remaining: 1,
      deadline_ms: Date.now() + 60_000,
      budget: 0,
      strict: false,
    });
    const res = await fetch(`${p.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${issued.key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} }),
    });
    assert.equal(res.status, 401, await res.text());
    await issued.revoke();
  });
});
