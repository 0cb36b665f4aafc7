import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Deployment, startDeployment } from '../helpers/deployment.ts';
import { runCli } from '../helpers/process.ts';
import { publishWithFiles } from '../helpers/publish.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * The emulated AWS deployment at the cloud's timing: every ECS task
 * takes PLATFORM_EMULATOR_TASK_START_MS to start, as a Fargate task takes 20 to 60 s. A tool call
 * with no warm runner waits for a start; the next, on a warm runner, answers in about a second. A
 * service deploy pays the start, and `agenthost services deploy` keeps saying that it waits. The
 * start here (12 s) is shorter than Fargate's quickest, to keep the suite short, and longer than
 * the CLI's 10 s between progress lines; bench:sandbox-aws measures at 20 s. A deployment no call
 * has reached keeps its pool warm all the same: the refill function runs every minute.
 */

const START_MS = 12_000;

/** Publishes an agent with its bundle as `key`'s account. */
const publish = (d: Deployment, key: string, body: Record<string, unknown>, files: Record<string, string>) =>
  publishWithFiles(d, key, { supported_providers: ['any'], required_secrets: [], ...body }, files);

const ECHO = { name: 'echo', type: 'tool', description: 'Echoes.', runtime: { command: 'cat' } };

/** A tool call of `org`'s echo agent: its time in ms, once it answered 200 with its input. */
async function echoCall(d: Deployment, org: string, key: string, n: number): Promise<number> {
  return (await timedEchoCall(d, org, key, n)).ms;
}

/** The same, with the call's request id (its trace's). */
async function timedEchoCall(
  d: Deployment,
  org: string,
  key: string,
  n: number,
): Promise<{ ms: number; requestId: string }> {
  const started = Date.now();
  const res = await d.request<{ data: { n: number }; metadata: { request_id: string } }>(
    'POST',
    `/${org}/echo/v1/run`,
    { key, body: { n } },
  );
  assert.equal(res.status, 200, `${res.text}\n${d.output().slice(-3000)}`);
  assert.equal(res.body.data.n, n);
  return { ms: Date.now() - started, requestId: res.body.metadata.request_id };
}

// Two deployments side by side: each mostly waits for its tasks to start.
describe('the emulated deployment at the cloud’s timing', { concurrency: 2 }, () => {
  describe('calls and deploys', { timeout: 300_000 }, () => {
    let d: Deployment;
    let owner: { key: string; org: string };
    let home: string;
    let echoId: string;

    before(async () => {
      home = await mkdtemp(join(tmpdir(), 'agenthost-timing-home-'));
      d = await startDeployment('emulated', { PLATFORM_EMULATOR_TASK_START_MS: String(START_MS) });
      const o = await d.createAccount('timing', 'pro');
      owner = { key: o.key, org: 'timing' };
      echoId = await publish(d, owner.key, ECHO, { 'README.md': 'echo' });
      await publish(
        d,
        owner.key,
        {
          name: 'web',
          type: 'tool',
          description: 'A small HTTP server.',
          runtime: { command: 'node server.mjs' },
          run_mode: 'always_on',
          timeout_seconds: 0,
        },
        {
          'server.mjs':
            "import { createServer } from 'node:http'; createServer((q, s) => s.end('up')).listen(Number(process.env.PORT), '127.0.0.1');",
        },
      );
    });
    after(async () => {
      await d?.close();
      await rm(home, { recursive: true, force: true });
    });

    it('a tool call waits for a task start only when no runner is warm, and its trace shows where', async () => {
      const call = (n: number) => timedEchoCall(d, owner.org, owner.key, n);
      const cold = await call(1);
      assert.ok(cold.ms >= START_MS, `the first call waited for its task: ${cold.ms} ms`);
      const warm = [await call(2), await call(3)];
      // A warm runner starts no task: each call in under half a task start. Alone they take about
      // a second, on a loaded machine several, so a line of a few seconds would fail on load alone.
      // How fast warm runners are is bench/sandbox-aws.ts's to measure (docs/performance.md); this
      // tells warm from cold, as test/e2e/streamed-calls.test.ts does.
      for (const { ms } of warm)
        assert.ok(ms < START_MS / 2, `a warm runner answers with no task start: ${warm.map((w) => w.ms)} ms`);
      // The trace says where the time went (docs/traces.md): the run's `sandbox` span holds the task
      // start, from RunTask to the runner's first word; a warm runner's holds none.
      const sandboxMs = async (requestId: string) => {
        const trace = await d.request<{ spans: { name: string; duration_ms: number }[] }>(
          'GET',
          `/agents/${echoId}/calls/${requestId}/trace`,
          { key: owner.key },
        );
        assert.equal(trace.status, 200, trace.text);
        const span = trace.body.spans.find((s) => s.name === 'sandbox');
        assert.ok(span, trace.text);
        return span.duration_ms;
      };
      assert.ok((await sandboxMs(cold.requestId)) >= START_MS, 'the cold run’s sandbox span holds the start');
      assert.ok((await sandboxMs(warm[0]?.requestId ?? '')) < START_MS / 2, 'a warm run’s holds none');
    });

    it('a service deploy pays the task start, and the CLI keeps its progress line while it waits', async () => {
      const started = Date.now();
      const res = await runCli(['services', 'deploy', `${owner.org}/web`, '--wait-timeout', '120'], {
        AGENTHOST_URL: d.url,
        AGENTHOST_API_KEY: owner.key,
        XDG_CONFIG_HOME: join(home, 'config'),
      });
      assert.equal(res.code, 0, `${res.stderr}\n${d.output().slice(-3000)}`);
      assert.ok(Date.now() - started >= START_MS, 'the deploy waited for the task');
      assert.match(res.stderr, /^web: provisioning, starting \(\d+\.\d s\)$/m);
      assert.match(res.stderr, /^web: still provisioning, starting \((1\d|[2-9]\d)\.\d s\)$/m, res.stderr);
      assert.match(res.stderr, /^web: running, healthy \(\d+\.\d s\)$/m);
    });
  });

  describe('a deployment no call has reached', { timeout: 300_000 }, () => {
    let d: Deployment;
    let owner: { key: string; org: string };

    before(async () => {
      d = await startDeployment('emulated', { PLATFORM_EMULATOR_TASK_START_MS: String(START_MS) });
      const o = await d.createAccount('quiet', 'pro');
      owner = { key: o.key, org: 'quiet' };
      await publish(d, owner.key, ECHO, { 'README.md': 'echo' });
    });
    after(async () => {
      await d?.close();
    });

    it('has warm runners from the pool’s refill (every minute), and its first tool call answers warm', async () => {
      // The refill function's rule fires a minute after the start; its runners then take START_MS.
      const runners = await waitFor(
        'two warm runners waiting for claims, before any call',
        () => {
          const ids = new Set(
            [...d.output().matchAll(/warm runner waiting[^\n]*?(wr-[0-9a-f]{32})/g)].map((m) => m[1]),
          );
          return ids.size >= 2 ? ids : undefined;
        },
        150_000,
        250,
      );
      assert.equal(runners.size, 2, 'the floor, no more');
      const ms = await echoCall(d, owner.org, owner.key, 1);
      // One of the refill's runners served it: no task start (START_MS) in the call, which a call
      // that waits for one never answers under (the cold call above). The call also pays the calls
      // function's cold start, as a first call on AWS does: 6.3 s in a fresh-clone CI run on a
      // machine loaded by its neighbours (load average 6 on two cores), so no tighter bound.
      const claimed = [...d.output().matchAll(/claimed[^\n]*?(wr-[0-9a-f]{32})/g)].map((m) => m[1]);
      assert.ok(
        claimed.some((id) => runners.has(id)),
        `a runner the refill started served the call: ${claimed}`,
      );
      assert.ok(ms < START_MS, `the first call of a quiet deployment answers warm: ${ms} ms`);
    });
  });
});
