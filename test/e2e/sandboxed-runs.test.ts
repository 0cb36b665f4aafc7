import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { after, before, beforeEach, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ECSClient, ListClustersCommand } from '@aws-sdk/client-ecs';
import { DEFAULT_RUNNER_SIZE } from '../../functions/adapters/aws/fargate-size.ts';
import type { TraceView } from '../../functions/core/traces/trace-schemas.ts';
import { readEndpointsFile } from '../../functions/emulator/emulated-endpoints.ts';
import { listFargateTasks } from '../../functions/emulator/fargate-usage.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { bundleOf } from '../helpers/bundles.ts';
import { type Deployment, startDeployment } from '../helpers/deployment.ts';
import { eachDeployment } from '../helpers/each-deployment.ts';
import { S3_EMULATOR_CREDENTIALS } from '../helpers/emulated-aws.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { joinWorkspace } from '../helpers/membership.ts';
import { errorOf } from '../helpers/platform.ts';
import { runEnded } from '../helpers/run-ended.ts';
import { runningCommands } from '../helpers/running-commands.ts';
import { leakyToolScript, secretForms } from '../helpers/secret-forms.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * User code in the sandbox over HTTP against both deployments: a tool agent (bubblewrap locally;
 * on the emulated deployment the synthesized calls Lambda starts an ECS task, which runs the task
 * definition's runner under bubblewrap and moves the run through S3) and a managed tool-use loop
 * whose custom tool runs there too, with a workspace secret that must never come back.
 */

/**
 * The run worker's invocation timeout on the emulated deployment (its 900 s, shortened). The worker
 * has the CPU share of its 384 MB (a fifth of a core), and a cold invocation replays the run and
 * opens a sandbox: on a loaded 2-core machine 5 s let no invocation reach a checkpoint, and three
 * such failures in a row end the execution (emulator/durable-invocations.ts).
 */
const WORKER_TIMEOUT_SECONDS = 12;

type Envelope = { data: Record<string, unknown>; warnings: { code: string }[] };

const readStdin =
  "const chunks = []; for await (const c of process.stdin) chunks.push(c); const input = JSON.parse(Buffer.concat(chunks).toString() || '{}');";

eachDeployment('sandboxed runs: tool agents and managed loops', {}, (kind) => {
  let d: Deployment;
  let fake: FakeLlmProviders;
  let ws: string;
  const secret = `sk-e2e-${kind}-DO-NOT-LEAK-0123456789`;

  const publish = async (manifest: Record<string, unknown>, files: Record<string, string>) => {
    const res = await d.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      body: manifest,
    });
    assert.equal(res.status, 201, res.text);
    const up = await d.request('POST', `/agents/${res.body.id}/upload`, {
      rawBody: await bundleOf(files),
      headers: { 'content-type': 'application/gzip' },
    });
    assert.equal(up.status, 200, up.text);
    return res.body.id;
  };

  before(async () => {
    fake = await startFakeLlm();
    d = await startDeployment(kind, {
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
      // The run worker’s invocations end after 12 s instead of 15 minutes (emulated only): a run
      // here outlives the invocation that first ran it.
      [ENV.emulatorDurableTimeoutSeconds]: String(WORKER_TIMEOUT_SECONDS),
    });
    const list = await d.request<{ workspaces: { id: string; slug: string }[] }>('GET', '/workspaces');
    ws = list.body.workspaces.find((w) => w.slug === 'local')?.id as string;
    const put = await d.request('PUT', `/workspaces/${ws}/secrets`, {
      body: { name: 'SERVICE_TOKEN', value: secret },
    });
    assert.equal(put.status, 200, put.text);
  });
  after(async () => {
    await d?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  it('runs a tool agent’s command on its JSON input, with its declared secret, never answering the secret', async () => {
    await publish(
      {
        name: 'adder',
        type: 'tool',
        description: 'Adds.',
        supported_providers: ['any'],
        runtime: { command: 'node main.mjs' },
        required_secrets: ['SERVICE_TOKEN'],
      },
      {
        'main.mjs': `${readStdin} console.log(JSON.stringify({ sum: input.a + input.b, cwd: process.cwd(), token: process.env.SERVICE_TOKEN, tokenLength: (process.env.SERVICE_TOKEN ?? '').length }));`,
      },
    );
    const res = await d.request<Envelope>('POST', '/local/adder/v1/run', { body: { a: 2, b: 3 } });
    assert.equal(res.status, 200, `${res.text}\n${d.output().slice(-3000)}`);
    assert.equal(res.body.data.sum, 5);
    assert.equal(res.body.data.cwd, '/work');
    assert.equal(res.body.data.tokenLength, secret.length, 'the declared secret reached the command');
    assert.ok(!res.text.includes(secret), 'the secret is redacted from the answer');
  });

  if (kind === 'emulated') {
    it("shows an operator's script with the AWS SDK the sandbox's ECS tasks, their size and capacity provider, within the account's quota", async () => {
      // As a script pointed at the deployment's ECS (the endpoints file names it) would read it.
      const endpoints = readEndpointsFile(d.dataDir);
      assert.ok(endpoints?.ecsEndpoint);
      const ecs = new ECSClient({
        region: endpoints.region,
        endpoint: endpoints.ecsEndpoint,
        credentials: S3_EMULATOR_CREDENTIALS,
      });
      try {
        const clusters = (await ecs.send(new ListClustersCommand({}))).clusterArns ?? [];
        assert.ok(clusters.length > 0, "the template's cluster");
        // The tool call above ran on a task: the warm pool's, started for it or kept for it.
        const tasks = await listFargateTasks(ecs);
        assert.ok(tasks.length > 0, 'its task is listed');
        for (const t of tasks) {
          // The default runner's size: no agent here declares another.
          assert.equal(t.cpu, String(DEFAULT_RUNNER_SIZE.cpu), t.taskArn);
          assert.equal(t.memory, String(DEFAULT_RUNNER_SIZE.memory), t.taskArn);
          // The floor's runners on Spot (sandboxSpot's default), a run's own on demand.
          assert.ok(['FARGATE', 'FARGATE_SPOT'].includes(String(t.capacityProviderName)), t.taskArn);
          assert.ok(t.createdAt && clusters.includes(t.clusterArn as string), t.taskArn);
        }
        const live = tasks.filter((t) => t.lastStatus !== 'STOPPED');
        assert.ok(live.length > 0, 'the warm runners run');
        // A new account's 6 vCPUs (PLATFORM_EMULATOR_FARGATE_VCPU_QUOTA's default) bound them,
        // on demand and on Spot each.
        for (const provider of ['FARGATE', 'FARGATE_SPOT']) {
          const of = live.filter((t) => t.capacityProviderName === provider);
          assert.ok(of.reduce((n, t) => n + Number(t.cpu) / 1024, 0) <= 6, provider);
        }
      } finally {
        ecs.destroy();
      }
    });
  }

  it('a run sees no file or process an earlier run left, even on a warm runner; another workspace never gets that runner', async () => {
    // Tried from the other side: the first run leaves a file in its working directory and in
    // /tmp and a process in a session of its own; the next run of the same agent looks for them.
    // On the emulated deployment the second run is served by the same warm runner (the same
    // task: the same PID namespace), after its reset; another account's run of the same public
    // agent is not.
    await publish(
      {
        name: 'leaver',
        type: 'tool',
        description: 'Leaves things behind, then looks for them.',
        supported_providers: ['any'],
        runtime: { command: 'node main.mjs' },
        required_secrets: [],
        is_public: true,
      },
      {
        'main.mjs': `${readStdin}
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
const task = readlinkSync('/proc/self/ns/pid');
if (input.phase === 'leave') {
writeFileSync('left.txt', 'x');
writeFileSync('/tmp/left.txt', 'x');
const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
child.unref();
console.log(JSON.stringify({ task, pid: child.pid }));
} else {
let state = '';
try { state = /State:\\s+(\\S)/.exec(readFileSync('/proc/' + input.pid + '/status', 'utf8'))?.[1] ?? ''; } catch {}
console.log(JSON.stringify({ task, file: existsSync('left.txt'), tmp: existsSync('/tmp/left.txt'), alive: state !== '' && state !== 'Z' }));
}`,
      },
    );
    const leave = await d.request<Envelope>('POST', '/local/leaver/v1/run', { body: { phase: 'leave' } });
    assert.equal(leave.status, 200, leave.text);
    const look = await d.request<Envelope>('POST', '/local/leaver/v1/run', {
      body: { phase: 'look', pid: leave.body.data.pid },
    });
    assert.equal(look.status, 200, look.text);
    assert.deepEqual(
      { file: look.body.data.file, tmp: look.body.data.tmp, alive: look.body.data.alive },
      { file: false, tmp: false, alive: false },
    );
    if (kind === 'emulated') assert.equal(look.body.data.task, leave.body.data.task, 'the same warm runner');
    const other = await d.createAccount(`leaver-other-${kind}`);
    const theirs = await d.request<Envelope>('POST', '/local/leaver/v1/run', {
      key: other.key,
      body: { phase: 'look', pid: leave.body.data.pid },
    });
    assert.equal(theirs.status, 200, theirs.text);
    // A warm runner's task is one PID namespace for its runs; locally every run has its own, and
    // the kernel reuses a freed namespace's number, so only the emulated deployment's can be told.
    if (kind === 'emulated')
      assert.notEqual(theirs.body.data.task, leave.body.data.task, 'another workspace: another task');
    assert.equal(theirs.body.data.alive, false);
    assert.equal(theirs.body.data.file, false);
  });

  it('answers a tool that fails with the error envelope', async () => {
    await publish(
      {
        name: 'failing',
        type: 'tool',
        description: 'Fails.',
        supported_providers: ['any'],
        runtime: { command: 'node main.mjs' },
        required_secrets: [],
      },
      { 'main.mjs': "console.error('broken on purpose'); process.exit(3);" },
    );
    const res = await d.request('POST', '/local/failing/v1/run', { body: {} });
    assert.ok(res.status >= 400 && res.status < 600, res.text);
    const err = errorOf(res);
    assert.ok(err.code.length > 0);
  });

  it('keeps a stranger’s call’s stderr from the public tool’s author, in every form, and shows the author its own', async () => {
    const id = await publish(
      {
        name: 'leaky',
        type: 'tool',
        description: 'Writes its secret to stderr in forms redaction cannot know.',
        supported_providers: ['any'],
        runtime: { command: 'node main.mjs' },
        required_secrets: ['SERVICE_TOKEN'],
        is_public: true,
      },
      { 'main.mjs': leakyToolScript('SERVICE_TOKEN') },
    );
    const stranger = await d.createAccount(`leaky-caller-${kind}`);
    const theirs = `stranger-${kind}-own-value-0123456789`;
    const put = await d.request('PUT', `/workspaces/${stranger.workspaceId}/secrets`, {
      key: stranger.key,
      body: { name: 'SERVICE_TOKEN', value: theirs },
    });
    assert.equal(put.status, 200, put.text);
    const failed = await d.request('POST', '/local/leaky/v1/run', {
      key: stranger.key,
      body: { fail: true },
    });
    assert.equal(failed.status, 500, `${failed.text}\n${d.output().slice(-3000)}`);
    assert.match(errorOf(failed).message, /exited with status 3/);
    const own = await d.request('POST', '/local/leaky/v1/run', { body: { fail: true } });
    assert.equal(own.status, 500, own.text);

    const logs = await d.request<{ logs: { message: string }[] }>('GET', `/agents/${id}/logs`);
    assert.equal(logs.status, 200, logs.text);
    const text = logs.body.logs.map((l) => l.message).join('\n');
    for (const [name, form] of Object.entries(secretForms(theirs)))
      assert.ok(!text.includes(form), `the stranger's value, ${name}, reached the author:\n${text}`);
    assert.match(
      text,
      /^command exited with status 3; stderr tail: \d+ bytes \(the caller's output, not shown\)$/m,
    );
    for (const [name, form] of Object.entries(secretForms(secret)))
      assert.ok(text.includes(form), `the author's own call shows its stderr whole (${name})`);
  });

  it('gives a loop’s bash the declared secret only when the manifest says so, for a member who calls it', async () => {
    const member = await d.createAccount(`loop-member-${kind}`);
    await joinWorkspace(d.request, ws, d.ownerKey, { key: member.key, id: member.accountId });
    const printed = async (name: string, loop: Record<string, unknown>) => {
      const res = await d.request<{ warnings: { code: string }[] }>('POST', '/agents', {
        body: {
          name,
          type: 'agent',
          description: 'A loop with bash and a secret.',
          supported_providers: ['anthropic'],
          required_secrets: ['SERVICE_TOKEN'],
          prompt_template: 'Go.',
          loop,
        },
      });
      assert.equal(res.status, 201, res.text);
      fake.reset();
      fake.setResponder((call) => {
        const result = call.toolResults?.at(-1);
        if (result) return { toolCalls: [{ name: 'submit_result', input: { printed: result.content } }] };
        return {
          toolCalls: [{ name: 'bash', input: { command: 'echo "[$(printenv SERVICE_TOKEN | rev)]"' } }],
        };
      });
      const ran = await d.request<Envelope>('POST', `/local/${name}/v1/run`, { key: member.key, body: {} });
      assert.equal(ran.status, 200, `${ran.text}\n${d.output().slice(-3000)}`);
      return {
        warnings: res.body.warnings.map((w) => w.code),
        printed: String(fake.calls[1]?.toolResults?.[0]?.content),
      };
    };
    const closed = await printed('closed-loop', { max_turns: 3 });
    assert.deepEqual(closed.warnings, ['SECRETS_NOT_IN_SANDBOX']);
    assert.match(closed.printed, /stdout:\n\[\]\n/, 'no secret in bash’s environment');
    const open = await printed('open-loop', { max_turns: 3, secrets_in_sandbox: true });
    assert.deepEqual(open.warnings, ['SECRETS_IN_SANDBOX']);
    assert.ok(open.printed.includes(`[${secretForms(secret).reversed}]`), open.printed);
  });

  it('runs a managed tool-use loop whose custom tool runs in the sandbox', async () => {
    await publish(
      {
        name: 'liner',
        type: 'agent',
        description: 'Counts lines with its tool.',
        supported_providers: ['anthropic'],
        loop: { max_turns: 4 },
        custom_tools: [
          {
            name: 'count_lines',
            description: 'Counts the words of a text.',
            command: 'node count.mjs {{text}}',
            input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
          },
        ],
      },
      {
        'count.mjs': "console.log(String(process.argv[2].split(' ').length));",
      },
    );
    fake.setResponder((call) => {
      const result = call.toolResults?.at(-1);
      if (result) return { toolCalls: [{ name: 'submit_result', input: { tool_said: result.content } }] };
      return { toolCalls: [{ name: 'count_lines', input: { text: 'a b c' } }] };
    });
    const res = await d.request<Envelope>('POST', '/local/liner/v1/run', {
      body: { question: 'How many lines?' },
    });
    assert.equal(res.status, 200, `${res.text}\n${d.output().slice(-3000)}`);
    const said = String(res.body.data.tool_said);
    assert.match(said, /\b3\b/, `the tool ran in the sandbox and answered: ${said}`);
  });
  it('reports a loop’s command that fails as failed to the model, in the trace and in the log', async () => {
    // The sandbox's exit status (the ECS runner's on the emulated deployment)
    // is the tool call's outcome everywhere, and the command's exec span hangs under that call.
    const id = await publish(
      {
        name: 'failer',
        type: 'agent',
        description: 'Runs a command that fails.',
        supported_providers: ['anthropic'],
        loop: { max_turns: 4 },
      },
      { 'notes.txt': 'nothing' },
    );
    fake.setResponder((call) => {
      const result = call.toolResults?.at(-1);
      if (result) {
        const submitted = { said: result.content, is_error: result.isError };
        return { toolCalls: [{ name: 'submit_result', input: submitted }] };
      }
      return { toolCalls: [{ name: 'bash', input: { command: 'echo partial; exit 4' } }] };
    });
    const res = await d.request<Envelope & { metadata: { request_id: string } }>(
      'POST',
      '/local/failer/v1/run',
      { body: {} },
    );
    assert.equal(res.status, 200, `${res.text}\n${d.output().slice(-3000)}`);
    assert.deepEqual(res.body.data, { said: 'exit code 4\nstdout:\npartial\n', is_error: true });
    const requestId = res.body.metadata.request_id;

    const trace = await d.request<TraceView>('GET', `/agents/${id}/calls/${requestId}/trace`);
    assert.equal(trace.status, 200, trace.text);
    const spans = trace.body.spans;
    const tool = spans.find((s) => s.name === 'execute_tool bash');
    const exec = spans.find((s) => s.name === 'exec echo');
    assert.ok(tool && exec, spans.map((s) => s.name).join(', '));
    assert.equal(tool.status, 'error');
    assert.equal(tool.attributes['error.type'], 'EXIT_STATUS');
    assert.equal(tool.attributes['process.exit.code'], 4);
    assert.equal(exec.parent_span_id, tool.span_id);
    assert.equal(exec.status, 'error');
    assert.equal(exec.attributes['process.exit.code'], 4);

    const logs = await d.request<{ logs: { level: string; message: string; request_id: string }[] }>(
      'GET',
      `/agents/${id}/logs`,
    );
    const line = logs.body.logs.find((l) => l.request_id === requestId && l.message.startsWith('bash '));
    assert.match(line?.message ?? '', / → exit code 4 in \d+ ms$/);
    assert.equal(line?.level, 'error');
  });

  it('runs a loop started without waiting past the invocation that first ran it (emulated: the run worker timed out), without running its command or sending its first request again', {
    timeout: 90_000,
  }, async () => {
    const made = await d.request('POST', '/agents?allow_no_secrets=true', {
      body: {
        name: 'tides',
        type: 'agent',
        description: 'Reads the tides for a while.',
        supported_providers: ['anthropic'],
        prompt_template: 'Read the tides.',
        loop: { max_turns: 4 },
      },
    });
    assert.equal(made.status, 201, made.text);
    // Turn 1 runs a command whose output never comes out the same twice; turn 2's first answer
    // never comes (the worker's invocation times out waiting for it), its second is quick.
    const command = '(date +%s%N; od -An -N8 -tx8 /dev/urandom) | tr -d " \\n"';
    let turn2 = 0;
    fake.setResponder((call) => {
      const [result] = call.toolResults ?? [];
      if (!result) return { toolCalls: [{ name: 'bash', input: { command } }] };
      const submit = { toolCalls: [{ name: 'submit_result', input: { reading: result.content } }] };
      turn2++;
      // (Locally nothing cuts the run: no wait is needed.)
      return turn2 === 1 && kind === 'emulated' ? { ...submit, delayMs: 10 * 60_000 } : submit;
    });
    const started = await d.request<{ run_id: string }>('POST', '/local/tides/v1/run', {
      body: {},
      headers: { prefer: 'respond-async' },
    });
    assert.equal(started.status, 202, started.text);
    const ended = await runEnded<{ status: string; result: { body: Envelope } | null }>(
      d.request,
      started.body.run_id,
      { timeoutMs: 80_000, context: () => d.output().slice(-6000) },
    );
    assert.equal(ended.status, 'succeeded', `${JSON.stringify(ended)}\n${d.output().slice(-3000)}`);
    const first = fake.calls[1]?.toolResults?.[0];
    assert.ok(first && !first.isError, JSON.stringify(fake.calls[1]?.toolResults));
    assert.equal(ended.result?.body.data.reading, first.content);
    // Turn 1's request went once; on the emulated deployment turn 2's went again from the
    // worker's next invocation, carrying the very output the command printed in the first one.
    assert.equal(fake.calls.filter((c) => (c.toolResults ?? []).length === 0).length, 1);
    if (kind === 'emulated') {
      assert.equal(fake.calls.length, 3, d.output().slice(-3000));
      assert.equal(await fake.calls[1]?.settled, 'disconnected', 'the first invocation was cut off');
      assert.equal(fake.calls[2]?.toolResults?.[0]?.content, first.content);
    } else assert.equal(fake.calls.length, 2);
  });

  it('cancels a run in the middle of its sandboxed command (emulated: run by the run worker): the command stops, the run ends cancelled, its use recorded', async () => {
    // A command of this deployment's own, so that no other test's process counts.
    const command = `sleep ${kind === 'local' ? 71 : 73}`;
    await publish(
      {
        name: 'napper',
        type: 'tool',
        description: 'Naps.',
        supported_providers: ['any'],
        runtime: { command },
      },
      { 'README.md': 'Naps.' },
    );
    const started = await d.request<{ run_id: string; request_id: string }>('POST', '/local/napper/v1/run', {
      body: {},
      headers: { prefer: 'respond-async' },
    });
    assert.equal(started.status, 202, started.text);
    await waitFor('the command to run', async () =>
      (await runningCommands(command)) > 0 ? true : undefined,
    );
    const cancel = await d.request<{ status: string }>('POST', `/runs/${started.body.run_id}/cancel`);
    assert.ok(cancel.status === 200 || cancel.status === 202, cancel.text);
    const ended = await runEnded(d.request, started.body.run_id);
    assert.equal(ended.status, 'cancelled', JSON.stringify(ended));
    await waitFor('the command to be gone', async () =>
      (await runningCommands(command)) === 0 ? true : undefined,
    );
    const logs = await d.request<{ logs: { request_id: string; status: string; compute_ms: number }[] }>(
      'GET',
      '/usage/logs?limit=20',
    );
    const own = logs.body.logs.filter((l) => l.request_id === started.body.request_id);
    assert.equal(own.length, 1, JSON.stringify(logs.body.logs));
    assert.notEqual(own[0]?.status, 'success');
  });

  it('hands out a public agent’s bundle through a download URL that serves its exact bytes', async () => {
    const files = { 'main.mjs': 'console.log(JSON.stringify({ ok: true }));' };
    await publish(
      {
        name: 'shared-tool',
        type: 'tool',
        description: 'Downloadable.',
        supported_providers: ['any'],
        runtime: { command: 'node main.mjs' },
        is_public: true,
        allow_local_download: true,
      },
      files,
    );
    const res = await d.request<{ bundle: { url: string; sha256: string; size_bytes: number } }>(
      'GET',
      '/public/agents/local/shared-tool/v1/download',
      { key: null },
    );
    assert.equal(res.status, 200, res.text);
    const { url, sha256, size_bytes } = res.body.bundle;
    // Locally a file on this machine; on AWS a presigned URL of the bucket (here the S3 emulator's).
    const bytes = url.startsWith('file:')
      ? await readFile(fileURLToPath(url))
      : Buffer.from(await (await fetch(url)).arrayBuffer());
    assert.equal(bytes.length, size_bytes);
    assert.equal(createHash('sha256').update(bytes).digest('hex'), sha256);
    if (kind === 'emulated') assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\//, 'the emulated S3 endpoint');
  });
});
