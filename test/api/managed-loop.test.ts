import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { packDirectory } from '../../functions/cli/pack.ts';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { fillCommand } from '../../functions/core/agents/placeholders.ts';
import type { TraceView } from '../../functions/core/traces/trace-schemas.ts';
import { callRecordKeys, fromCallRecordItem } from '../../functions/core/usage/call-records.ts';
import { queryAll } from '../../functions/ports/store.ts';
import { shellQuote } from '../../functions/shared/shell-quote.ts';
import { bundleOf } from '../helpers/bundles.ts';
import { readEventStream } from '../helpers/event-stream.ts';
import {
  type FakeLlmCall,
  type FakeLlmProviders,
  type FakeLlmResponse,
  start as startFakeLlm,
} from '../helpers/fake-llm-providers.ts';
import { joinWorkspace } from '../helpers/membership.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

type Envelope = { data: Record<string, unknown>; warnings: { code: string }[] };

const SECRET = 'sk-loop-DO-NOT-LEAK-0123456789abcdef';

const use = (name: string, input: unknown): FakeLlmResponse => ({ toolCalls: [{ name, input }] });
const resultsOf = (call: FakeLlmCall | undefined) => call?.toolResults ?? [];

describe('shell quoting of custom-tool arguments', () => {
  it('single-quotes every value, so nothing inside is special to the shell', () => {
    assert.equal(shellQuote(`it's`), `'it'\\''s'`);
    assert.equal(
      fillCommand('echo {{msg}} {{ n }} {{missing}}', { msg: '"; rm -rf / #', n: 3 }),
      `echo '"; rm -rf / #' '3' ''`,
    );
  });
});

describe('agents (managed_loop) end to end over HTTP, with a scripted Anthropic fake', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let owner: { key: string; id: string; ws: string };

  const publish = async (manifest: Record<string, unknown>, bundle?: Buffer) => {
    const res = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      key: owner.key,
      body: { type: 'agent', supported_providers: ['anthropic'], required_secrets: [], ...manifest },
    });
    assert.equal(res.status, 201, res.text);
    if (bundle) {
      const up = await p.request('POST', `/agents/${res.body.id}/upload`, {
        key: owner.key,
        rawBody: bundle,
        headers: { 'content-type': 'application/gzip' },
      });
      assert.equal(up.status, 200, up.text);
    }
    return res.body.id;
  };
  const call = (name: string, body: unknown) =>
    p.request<Envelope>('POST', `/loopco/${name}/v1/run`, { key: owner.key, body });

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform(
      {
        ANTHROPIC_API_KEY: 'sk-ant-test',
        ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
      },
      'sqlite',
      {},
      { inMemory: true },
    );
    const o = await createAccount(p.deps, { org: 'loopco', tier: 'pro' });
    owner = { key: o.api_key, id: o.account.id, ws: o.workspace_id };
    await p.request('PUT', `/workspaces/${owner.ws}/secrets`, {
      key: owner.key,
      body: { name: 'LOOP_TOKEN', value: SECRET },
    });
  });
  beforeEach(() => fake.reset());
  after(async () => {
    await p.close();
    await fake.close();
  });

  it('redacts the run’s secrets, in every encoded form, from the result the model submits', async () => {
    await publish({
      name: 'rebuilder',
      description: 'A loop whose model rebuilt the secret from pieces.',
      required_secrets: ['LOOP_TOKEN'],
      prompt_template: 'Go.',
    });
    const forms = {
      plain: SECRET,
      base64: Buffer.from(SECRET).toString('base64'),
      base64url: Buffer.from(SECRET).toString('base64url'),
      hex: Buffer.from(SECRET).toString('hex'),
      url: encodeURIComponent(SECRET),
      embedded: Buffer.from(`prefix:${SECRET}:suffix`).toString('base64'),
    };
    fake.enqueue(use('submit_result', { ...forms, [SECRET]: 'as a key' }));
    const res = await call('rebuilder', {});
    assert.equal(res.status, 200, res.text);
    for (const [name, form] of Object.entries(forms)) {
      assert.ok(!res.text.includes(form), `the ${name} form reached the caller: ${res.text}`);
    }
    assert.equal(res.body.data.plain, '[REDACTED]');
  });

  it('runs write_file, bash, a custom tool and submit_result in one sandbox; data is the submission', async () => {
    const id = await publish(
      {
        name: 'worker',
        description: 'A worker that writes notes.',
        required_secrets: ['LOOP_TOKEN'],
        loop: { secrets_in_sandbox: true },
        prompt_template: 'Write a note about {{topic}}.',
        custom_tools: [
          {
            name: 'shout',
            description: 'Upper-cases a text',
            command: 'node shout.mjs {{text}}',
            input_schema: {
              type: 'object',
              properties: { text: { type: 'string' } },
              required: ['text'],
            },
          },
        ],
      },
      await bundleOf({ 'shout.mjs': 'console.log(process.argv[2].toUpperCase());' }),
    );
    fake.enqueue(
      use('write_file', { path: 'notes/hello.txt', content: 'hello sandbox' }),
      use('bash', { command: 'cat notes/hello.txt; echo; echo "token=$LOOP_TOKEN"; pwd' }),
      use('shout', { text: 'hi there' }),
      use('list_files', {}),
      use('submit_result', { answer: 'done', notes: ['notes/hello.txt'] }),
    );
    const res = await call('worker', { topic: 'sandboxes' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, { answer: 'done', notes: ['notes/hello.txt'] });

    assert.equal(fake.calls.length, 5);
    const first = fake.calls[0]!;
    assert.equal(first.prompt, 'Write a note about sandboxes.');
    assert.match(first.system ?? '', /A worker that writes notes\./);
    assert.match(first.system ?? '', /submit_result/);
    assert.deepEqual(first.tools.sort(), [
      'bash',
      'list_files',
      'read_file',
      'shout',
      'submit_result',
      'write_file',
    ]);
    assert.match(resultsOf(fake.calls[1])[0]?.content ?? '', /Wrote 13 bytes to notes\/hello.txt/);
    const cat = resultsOf(fake.calls[2])[0];
    assert.equal(cat?.isError, false);
    assert.match(cat?.content ?? '', /^exit code 0\nstdout:\nhello sandbox\ntoken=\[REDACTED\]\n\/work\n/);
    assert.ok(!JSON.stringify(fake.calls.map((c) => c.body)).includes(SECRET), 'no secret reaches the model');
    assert.match(resultsOf(fake.calls[3])[0]?.content ?? '', /stdout:\nHI THERE/);
    assert.deepEqual((resultsOf(fake.calls[4])[0]?.content ?? '').split('\n'), [
      'notes/hello.txt',
      'shout.mjs',
    ]);

    const records = (await queryAll(p.deps.store, { pk: callRecordKeys.callerPk(owner.id) }))
      .map(fromCallRecordItem)
      .filter((r) => r.agent === 'worker');
    assert.equal(records.at(-1)?.provider, 'anthropic');
    assert.ok((records.at(-1)?.compute_ms ?? 0) > 0, 'command time is recorded');
    assert.ok((records.at(-1)?.total_tokens ?? 0) > 0, 'tokens are recorded');
    const logs = await p.request<{ logs: { message: string }[] }>('GET', `/agents/${id}/logs`, {
      key: owner.key,
    });
    const text = logs.body.logs.map((l) => l.message).join('\n');
    assert.match(text, /write_file "notes\/hello.txt" → 13 bytes/);
    assert.match(text, /bash .* → exit code 0/);
    assert.match(text, /loop ended \(submit\) after 5 turns/);
    assert.ok(!text.includes(SECRET));
  });

  it('gives the loop’s sandbox the declared secrets only when its manifest says so, as publishing says', async () => {
    // A member may call the workspace's agents but not read its secret values (docs/roles.md); the
    // member steers the model, and the model the loop's bash.
    const m = await createAccount(p.deps, { org: 'loopmember', tier: 'pro' });
    const member = { key: m.api_key, id: m.account.id };
    await joinWorkspace(p.request.bind(p), owner.ws, owner.key, member);
    const publishLoop = async (name: string, loop: Record<string, unknown>) => {
      const res = await p.request<{
        id: string;
        warnings: { code: string; field?: string; message: string }[];
      }>('POST', '/agents', {
        key: owner.key,
        body: {
          name,
          type: 'agent',
          description: 'A loop with bash and a secret',
          supported_providers: ['anthropic'],
          required_secrets: ['LOOP_TOKEN'],
          prompt_template: 'Go.',
          loop,
        },
      });
      assert.equal(res.status, 201, res.text);
      return res.body.warnings;
    };
    const printed = async (name: string) => {
      fake.reset();
      fake.enqueue(
        use('bash', { command: 'echo "[$(printenv LOOP_TOKEN | rev)]"' }),
        use('submit_result', { ok: true }),
      );
      const res = await p.request<Envelope>('POST', `/loopco/${name}/v1/run`, { key: member.key, body: {} });
      assert.equal(res.status, 200, res.text);
      return String(resultsOf(fake.calls[1])[0]?.content);
    };
    const reversed = [...SECRET].reverse().join('');

    const closed = await publishLoop('closed-loop', { max_turns: 3 });
    assert.deepEqual(
      closed.map((w) => [w.code, w.field]),
      [['SECRETS_NOT_IN_SANDBOX', 'loop.secrets_in_sandbox']],
    );
    assert.match(closed[0]?.message ?? '', /does not get LOOP_TOKEN/);
    assert.equal(
      await printed('closed-loop'),
      'exit code 0\nstdout:\n[]\n',
      'bash’s environment has no secret',
    );

    const open = await publishLoop('open-loop', { max_turns: 3, secrets_in_sandbox: true });
    assert.deepEqual(
      open.map((w) => [w.code, w.field]),
      [['SECRETS_IN_SANDBOX', 'loop.secrets_in_sandbox']],
    );
    assert.match(open[0]?.message ?? '', /gets LOOP_TOKEN: anyone who may call this agent can read/);
    assert.match(await printed('open-loop'), new RegExp(`\\[${reversed}\\]`), 'opted in: the value is there');
  });

  it('keeps a hostile argument one shell word: the tool echoes it literally and nothing else runs', async () => {
    await publish({
      name: 'echoer',
      description: 'Echoes things.',
      custom_tools: [
        {
          name: 'say',
          description: 'Echoes a message',
          command: 'echo {{msg}}',
          input_schema: { type: 'object', properties: { msg: { type: 'string' } }, required: ['msg'] },
        },
      ],
    });
    const hostile = [
      `"; rm -rf / #`,
      `'; rm -f marker.txt; echo '`,
      '$(rm -f marker.txt)',
      '`rm -f marker.txt`',
    ];
    fake.enqueue(
      use('write_file', { path: 'marker.txt', content: 'still here' }),
      ...hostile.map((msg) => use('say', { msg })),
      use('bash', { command: 'cat marker.txt' }),
      use('submit_result', { ok: true }),
    );
    const res = await call('echoer', {});
    assert.equal(res.status, 200, res.text);
    hostile.forEach((msg, i) => {
      const out = resultsOf(fake.calls[i + 2])[0];
      assert.equal(out?.content, `exit code 0\nstdout:\n${msg}\n`);
    });
    assert.match(resultsOf(fake.calls[hostile.length + 2])[0]?.content ?? '', /stdout:\nstill here/);
  });

  it('returns invalid custom-tool arguments to the model as a tool error, and the loop goes on', async () => {
    await publish({
      name: 'adder',
      description: 'Adds.',
      custom_tools: [
        {
          name: 'add',
          description: 'Adds two integers',
          command: 'expr {{a}} + {{b}}',
          input_schema: {
            type: 'object',
            properties: { a: { type: 'integer' }, b: { type: 'integer' } },
            required: ['a', 'b'],
          },
        },
      ],
    });
    fake.enqueue(
      use('add', { a: '1; touch pwned', b: 2 }),
      use('add', { a: 1 }),
      use('add', { a: 40, b: 2 }),
      use('read_file', { path: 'nope.txt' }),
      use('read_file', { path: '../../etc/passwd' }),
      use('submit_result', { sum: 42 }),
    );
    const res = await call('adder', {});
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, { sum: 42 });
    const bad = resultsOf(fake.calls[1])[0];
    assert.equal(bad?.isError, true);
    assert.match(bad?.content ?? '', /Invalid arguments for add: \/a must be integer/);
    const missing = resultsOf(fake.calls[2])[0];
    assert.equal(missing?.isError, true);
    assert.match(missing?.content ?? '', /\/b must have required property 'b'/);
    assert.equal(resultsOf(fake.calls[3])[0]?.content, 'exit code 0\nstdout:\n42\n');
    assert.deepEqual(resultsOf(fake.calls[4])[0], {
      toolUseId: resultsOf(fake.calls[4])[0]?.toolUseId,
      content: 'Error: Could not read "nope.txt": it does not exist',
      isError: true,
    });
    const escaping = resultsOf(fake.calls[5])[0];
    assert.equal(escaping?.isError, true);
    assert.match(escaping?.content ?? '', /'\.\.'/);
  });

  it('reports a tool whose command fails as failed in the step, the trace and the log; the model reads its output', async () => {
    const id = await publish({
      name: 'failing-tools',
      description: 'Runs commands that fail.',
      custom_tools: [{ name: 'check', description: 'Checks', command: 'echo checking; exit 3' }],
    });
    fake.enqueue(
      use('bash', { command: 'echo partial; echo broken >&2; exit 1' }),
      use('check', {}),
      use('read_file', { path: 'nope.txt' }),
      use('bash', {}),
      use('bash', { command: 'true' }),
      use('submit_result', { done: true }),
    );
    const started = Date.now();
    const streamed = await p.fetch(`/loopco/failing-tools/v1/run`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${owner.key}`,
        'content-type': 'application/json',
        accept: 'text/event-stream',
      },
      body: '{}',
    });
    assert.equal(streamed.status, 200);
    const { events } = await readEventStream(streamed, started);
    const steps = events.filter((e) => e.event === 'step').map((e) => JSON.parse(e.data));
    assert.deepEqual(
      steps.map((s) => [s.name, s.outcome]),
      [
        ['bash', 'error'],
        ['check', 'error'],
        ['read_file', 'error'],
        ['bash', 'error'],
        ['bash', 'ok'],
        ['submit_result', 'ok'],
      ],
    );
    const result = JSON.parse(events.at(-1)?.data ?? '{}');
    assert.equal(events.at(-1)?.event, 'result', events.at(-1)?.data);
    assert.deepEqual(result.data, { done: true });

    // The model still reads what the command printed, flagged as the tool's error; the loop went on.
    const failed = resultsOf(fake.calls[1])[0];
    assert.equal(failed?.isError, true);
    assert.equal(failed?.content, 'exit code 1\nstdout:\npartial\n\nstderr:\nbroken\n');
    assert.equal(resultsOf(fake.calls[2])[0]?.isError, true);
    assert.match(resultsOf(fake.calls[2])[0]?.content ?? '', /^exit code 3\nstdout:\nchecking/);
    assert.equal(resultsOf(fake.calls[3])[0]?.isError, true);
    assert.equal(resultsOf(fake.calls[4])[0]?.isError, true);
    assert.equal(resultsOf(fake.calls[5])[0]?.isError, false);

    const requestId = result.metadata.request_id as string;
    const trace = await p.request<TraceView>('GET', `/agents/${id}/calls/${requestId}/trace`, {
      key: owner.key,
    });
    assert.equal(trace.status, 200, trace.text);
    const spans = trace.body.spans;
    const named = (name: string) => spans.filter((s) => s.name === name);
    const [bashFailed, bashRefused, bashOk] = named('execute_tool bash');
    const [check] = named('execute_tool check');
    assert.ok(bashFailed && bashRefused && bashOk && check, spans.map((s) => s.name).join(', '));
    assert.equal(bashRefused.status, 'error');
    assert.equal(bashFailed.status, 'error');
    assert.equal(bashFailed.attributes['error.type'], 'EXIT_STATUS');
    assert.equal(bashFailed.attributes['process.exit.code'], 1);
    assert.equal(check.status, 'error');
    assert.equal(check.attributes['process.exit.code'], 3);
    assert.equal(bashOk.status, 'ok');
    assert.equal(named('execute_tool submit_result')[0]?.status, 'ok');
    assert.equal(named('execute_tool read_file')[0]?.status, 'error');
    // Each command's exec span hangs under the tool call that ran it, with the same outcome.
    const execs = spans.filter((s) => s.name.startsWith('exec '));
    assert.equal(execs.length, 3, execs.map((s) => s.name).join(', '));
    for (const [tool, exitCode] of [
      [bashFailed, 1],
      [check, 3],
      [bashOk, 0],
    ] as const) {
      const exec = execs.find((s) => s.parent_span_id === tool.span_id);
      assert.ok(exec, `an exec span under ${tool.name} (${tool.span_id})`);
      assert.equal(exec.attributes['process.exit.code'], exitCode);
      assert.equal(exec.status, tool.status);
    }

    const logs = await p.request<{ logs: { level: string; message: string; request_id: string }[] }>(
      'GET',
      `/agents/${id}/logs`,
      { key: owner.key },
    );
    const lines = logs.body.logs.filter((l) => l.request_id === requestId);
    assert.equal(lines.find((l) => /^bash .*exit 1.* → exit code 1/.test(l.message))?.level, 'error');
    assert.equal(lines.find((l) => /^check .* → exit code 3/.test(l.message))?.level, 'error');
    assert.equal(lines.find((l) => l.message === 'read_file "nope.txt" → refused')?.level, 'error');
    // A call the tool refused before running anything has its error line too (as its step says).
    assert.equal(
      lines.find((l) => l.message === 'bash → invalid arguments (command is not a string)')?.level,
      'error',
    );
    assert.equal(lines.find((l) => /^bash "true" → exit code 0/.test(l.message))?.level, 'info');
  });

  it('stops the loop at the deadline with 504 TIMEOUT', async () => {
    await publish({ name: 'sleeper', description: 'Sleeps.' });
    fake.setResponder(() => use('bash', { command: 'sleep 30' }));
    const started = Date.now();
    const res = await p.request('POST', '/loopco/sleeper/v1/run', {
      key: owner.key,
      body: {},
      headers: { 'x-platform-deadline-ms': String(p.clock.now().getTime() + 1_500) },
    });
    assert.equal(res.status, 504, res.text);
    assert.equal(errorOf(res).code, 'TIMEOUT');
    assert.ok(Date.now() - started < 5_000);
  });

  it('answers 422 UNPROCESSABLE when the agent uses all loop.max_turns turns without submitting', async () => {
    await publish({ name: 'looper', description: 'Never finishes.', loop: { max_turns: 3 } });
    fake.setResponder(() => use('bash', { command: 'true' }));
    const res = await call('looper', {});
    assert.equal(res.status, 422, res.text);
    const err = errorOf(res);
    assert.equal(err.code, 'UNPROCESSABLE');
    assert.equal(err.message, 'The agent used all 3 turns (loop.max_turns) without submitting a result');
    assert.equal(err.is_retryable, false);
    assert.equal(fake.calls.length, 3);
  });

  it('puts the agent’s default skills in the loop’s system text', async () => {
    const skill = await p.request('POST', '/agents', {
      key: owner.key,
      body: {
        type: 'skill',
        skill_md: '---\nname: careful\ndescription: Be careful\n---\nDouble-check every file you write.\n',
      },
    });
    assert.equal(skill.status, 201, skill.text);
    await publish({ name: 'skilled-loop', description: 'Uses a skill.', default_skills: ['loopco/careful'] });
    fake.enqueue(use('submit_result', { ok: true }));
    const res = await call('skilled-loop', {});
    assert.equal(res.status, 200, res.text);
    assert.match(fake.calls[0]?.system ?? '', /Double-check every file you write/);
  });

  it('answers 502 LLM_ERROR when the model ends without calling submit_result', async () => {
    await publish({ name: 'chatty', description: 'Talks.' });
    fake.enqueue({ text: 'I am done, no tools needed.' });
    const res = await call('chatty', {});
    assert.equal(res.status, 502, res.text);
    assert.match(errorOf(res).message, /without calling submit_result/);
  });

  it('validates the submission against output_schema: a mismatch is 502 LLM_ERROR, retryable', async () => {
    const outputSchema = {
      type: 'object',
      properties: { count: { type: 'integer' } },
      required: ['count'],
    };
    await publish({ name: 'counter', description: 'Counts.', output_schema: outputSchema });
    fake.enqueue(use('submit_result', { count: 'many' }));
    const res = await call('counter', {});
    assert.equal(res.status, 502, res.text);
    const err = errorOf(res);
    assert.equal(err.code, 'LLM_ERROR');
    assert.equal(err.is_retryable, true);
    assert.match(err.message, /output_schema \(\/count must be integer\)/);
    const submitTool = fake.calls[0]?.body.tools.find((t: { name: string }) => t.name === 'submit_result');
    assert.deepEqual(
      submitTool.input_schema.properties,
      outputSchema.properties,
      'the model is told the shape',
    );

    fake.reset();
    fake.enqueue(use('submit_result', { count: 7 }));
    const ok = await call('counter', {});
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.data, { count: 7 });
  });

  it('removes bash in strict orchestration mode, and refuses a submission before any dependency call', async () => {
    const helper = await p.request('POST', '/agents', {
      key: owner.key,
      body: { name: 'helper', type: 'prompt', description: 'Helps.', supported_providers: ['anthropic'] },
    });
    assert.equal(helper.status, 201, helper.text);
    const id = await publish({
      name: 'orchestrator',
      description: 'Delegates.',
      custom_tools: [
        {
          name: 'ask_helper',
          description: 'Asks loopco/helper',
          command: 'echo loopco/helper/v1 {{q}}',
          input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
        },
      ],
      manifest: {
        manifest_version: 1,
        dependencies: [{ id: 'loopco/helper', version: 'v1' }],
        max_hops: 1,
        timeout_ms: 60_000,
      },
    });
    // A strict orchestrator may not submit before it called a dependency: the early submission is
    // refused (a tool error the model sees), and a model that then gives up ends the loop unanswered.
    fake.enqueue(use('submit_result', { ok: true }), { text: 'giving up' });
    const res = await call('orchestrator', {});
    assert.equal(res.status, 502, res.text);
    assert.match(
      String(fake.calls[1]?.toolResults?.[0]?.content),
      /call at least one dependency before submit_result/,
    );
    // The refusal is the call's error line, as the submission's step and span say it failed.
    const requestId = (res.body as unknown as { metadata: { request_id: string } }).metadata.request_id;
    const logs = await p.request<{ logs: { level: string; message: string; request_id: string }[] }>(
      'GET',
      `/agents/${id}/logs`,
      { key: owner.key },
    );
    const refused = logs.body.logs.find(
      (l) => l.request_id === requestId && /^submit_result/.test(l.message),
    );
    assert.equal(refused?.message, 'submit_result → refused: no dependency called yet (strict mode)');
    assert.equal(refused?.level, 'error');
    assert.deepEqual(fake.calls[0]?.tools.sort(), [
      'ask_helper',
      'list_files',
      'read_file',
      'submit_result',
      'write_file',
    ]);
  });

  it('runs the agent-file-helper example end to end (count_lines on a bundled file)', async () => {
    const dir = new URL('../../examples/agent-file-helper/', import.meta.url).pathname;
    const manifest = JSON.parse(await readFile(join(dir, 'agent.json'), 'utf8'));
    const res = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      key: owner.key,
      body: manifest,
    });
    assert.equal(res.status, 201, res.text);
    const { data } = await packDirectory(dir, manifest.bundle);
    const up = await p.request('POST', `/agents/${res.body.id}/upload`, {
      key: owner.key,
      rawBody: data,
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(up.status, 200, up.text);

    const script = await readFile(join(dir, 'tools/count-lines.mjs'), 'utf8');
    const expected = script.split('\n').length;
    fake.setResponder((c) => {
      const result = c.toolResults[0];
      if (!result) return use('count_lines', { path: 'tools/count-lines.mjs' });
      const counted = JSON.parse(result.content.split('stdout:\n')[1] ?? '{}') as { lines: number };
      return use('submit_result', { file: 'tools/count-lines.mjs', lines: counted.lines });
    });
    const out = await call('file-helper', { question: 'How many lines has tools/count-lines.mjs?' });
    assert.equal(out.status, 200, out.text);
    assert.deepEqual(out.body.data, { file: 'tools/count-lines.mjs', lines: expected });
    assert.equal(fake.calls.length, 2);
    assert.equal(
      fake.calls[0]?.prompt,
      JSON.stringify({ question: 'How many lines has tools/count-lines.mjs?' }),
    );
  });
});
