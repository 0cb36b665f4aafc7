/**
 * `npm run bench:aws-cost`: what the AWS deployment costs, measured on the
 * emulated deployment and priced with the dated list prices of bench/aws-prices.ts. Every emulated
 * ECS task takes BENCH_TASK_START_MS (default 20000, Fargate's quickest) to start; the model is the
 * loopback fake (test/helpers/fake-llm-providers.ts) answering after 1 s. The deployment's meter
 * (functions/emulator/deployment-meter.ts) is reset before and read after each shape:
 *
 *  - idle: BENCH_IDLE_MINUTES (default 5: one housekeeping tick, five pool refills) of nothing. Its
 *    cost per second is the baseline the other shapes are measured over, and, times a month, the
 *    metered part of the idle month (the rest is the standing resources of the templates,
 *    synthesized here with `-c stage=dev` and with production defaults, bundling skipped).
 *  - prompt: BENCH_PROMPT_CALLS (default 60) calls of a prompt agent, 4 at a time.
 *  - streamed: one call streamed for 40 s (the model sends a piece a second).
 *  - agent → agent: BENCH_CHAIN_CALLS (default 10) calls of a loop agent that calls the prompt
 *    agent through its custom tool (three model answers a call), 2 at a time.
 *  - steady tool: a tool (`cat`, in the sandbox) called every second for BENCH_STEADY_SECONDS
 *    (default 120). Its runner's idle tail after the last call is left out: a tool called steadily
 *    for a million calls (11.6 days) pays it once.
 *  - sparse tools: BENCH_SPARSE_TOOLS (default 10) tools of as many workspaces, one call each, 12 s
 *    apart (the rate of 50 in 10 minutes), measured until the runners the calls started have
 *    stopped (at most BENCH_SPARSE_TAIL_MINUTES, default 12, after the last call): a sparse call
 *    pays its runner's whole idle wait.
 *  - long run: one run (`Prefer: respond-async`, answered 202 with its id) of a prompt agent whose
 *    model streams its answer for BENCH_LONG_RUN_SECONDS (default 60; a piece a second, as the
 *    streamed shape's), handed to the run worker (a Lambda durable function), its caller polling
 *    `GET /runs/{id}` every BENCH_LONG_RUN_POLL_SECONDS (default 5) until it is no longer
 *    running; the same run with the model answering in 1 s (`short run`); then BENCH_RUN_POLLS
 *    (default 20) polls of the ended run, one after another (`run poll`), the price of a poll.
 *    Its own table splits a run's cost into the worker's Lambda, its durable functions' charges,
 *    the polls and the rest, and derives an hour of a run's waiting from the two runs'
 *    difference, beside a streamed call's hour when the streamed shape ran too.
 *
 * Before each shape's window, a few untimed calls bring up the function instances (and the tool's
 * runner) it needs: the figures are steady state, where cold starts are a tail (on the emulator an
 * INIT takes seconds on a loaded machine, against a few hundred ms on Lambda).
 * A shape's cost per million calls is its window's metered cost less the idle deployment's for as
 * long, over its calls; the idle month is the standing resources for 730 hours plus the idle
 * baseline's metered Lambda, API Gateway, DynamoDB and S3 for as long (its Fargate is the pool's
 * floor, counted from the template). Data transfer, log ingestion and Container Insights metrics
 * are not metered. Runtime: about 25 minutes on 2 cores (the sparse shape's tail is most of it).
 * BENCH_LABEL (`before` or `after`, default `after`) names the docs/performance.md block it writes;
 * BENCH_SHAPES (comma-separated names) runs some shapes only (the idle baseline always runs), and
 * then that block is left as it is (only printed): a run of some shapes would replace every row.
 * The long run's table has a block of its own (`aws-cost-long-run`), written whenever it ran.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { MeterSnapshot } from '../functions/emulator/deployment-meter.ts';
import { readEndpointsFile } from '../functions/emulator/emulated-endpoints.ts';
import { readMeter, resetMeter } from '../functions/emulator/meter-endpoint.ts';
import { startDeployment } from '../test/helpers/deployment.ts';
import { start as startFakeLlm } from '../test/helpers/fake-llm-providers.ts';
import { publishLongRunAgent, publishTool, setUp } from './aws-cost-agents.ts';
import {
  LONG_RUN_SECONDS,
  type LongRunSeen,
  longRunAnswer,
  longRunTable,
  POLL_SECONDS,
  RUN_POLLS,
  runCaller,
  STREAMED_SECONDS,
} from './aws-cost-long-run.ts';
import {
  idleMonth,
  perMillionCalls,
  perSecond,
  poolPerSecond,
  priceSnapshot,
  SERVICES,
} from './aws-cost-pricing.ts';
import { AWS_PRICES, PRICES_CHECKED } from './aws-prices.ts';
import { machineLine, writeReport } from './report.ts';
import { standingResourcesOf } from './synthesized-standing.ts';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const TASK_START_MS = env('BENCH_TASK_START_MS', 20_000);
const IDLE_MINUTES = env('BENCH_IDLE_MINUTES', 5);
const PROMPT_CALLS = env('BENCH_PROMPT_CALLS', 60);
const CHAIN_CALLS = env('BENCH_CHAIN_CALLS', 10);
/** Warm-up passes at most before a shape's window: until one starts no Lambda instance. */
const WARM_UP_PASSES = 4;
/** Lambda instances started (INIT phases) within a meter's window. */
const coldStarts = (snapshot: MeterSnapshot) =>
  Object.values(snapshot.lambda).reduce((n, u) => n + u.coldStarts, 0);
const STEADY_SECONDS = env('BENCH_STEADY_SECONDS', 120);
const SPARSE_TOOLS = env('BENCH_SPARSE_TOOLS', 10);
const SPARSE_TAIL_MINUTES = env('BENCH_SPARSE_TAIL_MINUTES', 12);
const LABEL = process.env.BENCH_LABEL ?? 'after';
const ONLY = process.env.BENCH_SHAPES?.split(',').map((s) => s.trim());
const MODEL_MS = 1000;
/** After a shape's last answer, before its window is read: its functions' invocations end. */
const SETTLE_MS = 5000;

const TARGETS: Record<string, number> = { prompt: 15, 'steady tool': 40, 'sparse tools': 300 };

/** Failed calls of the current shape: status and the start of the answer, for its row. */
let failures: string[] = [];
const failure = (r: { status: number; text: string }) => {
  if (r.status !== 200) failures.push(`${r.status} ${r.text.replace(/\s+/g, ' ').slice(0, 120)}`);
  return r;
};

interface ShapeResult {
  name: string;
  what: string;
  calls: number;
  failed: number;
  failures: string[];
  snapshot: MeterSnapshot;
}

const fake = await startFakeLlm({ record: false });
fake.setResponder((call) => {
  if (call.provider === 'anthropic') {
    // The loop agent: call its dependency, then submit what it got.
    if ((call.toolResults ?? []).length > 0)
      return { delayMs: MODEL_MS, toolCalls: [{ name: 'submit_result', input: { ok: true } }] };
    return { delayMs: MODEL_MS, toolCalls: [{ name: 'call_dep', input: { text: 'hi' } }] };
  }
  if (call.prompt.includes('stream for 40 s'))
    return {
      chunks: Array.from({ length: STREAMED_SECONDS }, (_, i) => `piece ${i} `),
      chunkDelayMs: 1000,
    };
  const long = longRunAnswer(call);
  if (long) return long;
  return { delayMs: MODEL_MS, text: 'hello' };
});

const d = await startDeployment('emulated', {
  PLATFORM_EMULATOR_TASK_START_MS: String(TASK_START_MS),
  // Each Lambda instance held to the CPU its memory buys (a 512 MB function 29% of a vCPU), so a
  // function's billed duration, and the memory chosen on it, is what Lambda would bill.
  PLATFORM_EMULATOR_LAMBDA_CPU: 'share',
  PLATFORM_BOOTSTRAP_TIER: 'enterprise',
  PLATFORM_LOG_LEVEL: 'warn',
  OPENAI_API_KEY: 'sk-bench',
  OPENAI_BASE_URL: fake.baseUrls.openai,
  ANTHROPIC_API_KEY: 'sk-ant-bench',
  ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
});
const started = Date.now();
try {
  const meterEndpoint = readEndpointsFile(d.dataDir)?.meterEndpoint;
  if (!meterEndpoint) throw new Error('the emulated deployment serves no meter');
  const results: ShapeResult[] = [];
  const measure = async (
    name: string,
    what: string,
    run: () => Promise<{ calls: number; failed: number }>,
    warmUp: () => Promise<unknown> = async () => undefined,
  ): Promise<void> => {
    process.stdout.write(`${name}…\n`);
    // Steady state: the instances (and runner) the shape needs are up before its window. A call's
    // function runs on after its answer (its record written), so a client's next call can come while
    // that instance is still busy and start another: the shape needs more instances than it has
    // callers. Warm-up passes go on until one starts none (a million calls pay their cold starts
    // once; a window of sixty would pay them at the emulator's INIT of seconds).
    for (let pass = 1; pass <= WARM_UP_PASSES; pass++) {
      await resetMeter(meterEndpoint);
      await warmUp();
      if (coldStarts(await readMeter(meterEndpoint)) === 0) break;
    }
    await resetMeter(meterEndpoint);
    failures = [];
    const { calls, failed } = await run();
    // The last call's function runs on after its answer (its record, its release) and is metered
    // when it ends: without this wait a streamed call's 40 s fell outside its window (a run of
    // 2026-11-29 metered 3 of its 6 write units and none of its Lambda).
    await sleep(SETTLE_MS);
    results.push({ name, what, calls, failed, failures, snapshot: await readMeter(meterEndpoint) });
    for (const f of new Set(failures)) process.stdout.write(`  failed: ${f}\n`);
  };
  const wanted = (name: string) => !ONLY || ONLY.includes(name);

  await setUp(d);
  if (wanted('long run')) await publishLongRunAgent(d, LONG_RUN_SECONDS);
  // The pool's floor comes up on the first refill: wait for it before the idle window.
  await sleep(TASK_START_MS + 65_000);

  await measure('idle', `${IDLE_MINUTES} minutes of no traffic`, async () => {
    await sleep(IDLE_MINUTES * 60_000);
    return { calls: 0, failed: 0 };
  });

  const prompt = () => d.request('POST', '/local/bench-echo/v1/run', { body: { text: 'hi' } }).then(failure);
  const relay = () => d.request('POST', '/local/bench-relay/v1/run', { body: {} }).then(failure);
  const tool = () => d.request('POST', '/local/bench-tool/v1/run', { body: { warm: true } });
  if (wanted('prompt'))
    await measure(
      'prompt',
      `${PROMPT_CALLS} calls of a prompt agent, 4 at a time, the model 1 s`,
      () => together(PROMPT_CALLS, 4, prompt),
      () => together(12, 4, prompt),
    );
  if (wanted('streamed'))
    await measure(
      'streamed',
      'one call streamed for 40 s (a piece a second)',
      () =>
        together(1, 1, () =>
          d.request('POST', '/local/bench-echo/v1/run', {
            body: { text: 'stream for 40 s' },
            headers: { accept: 'text/event-stream' },
          }),
        ),
      prompt,
    );
  if (wanted('agent → agent'))
    await measure(
      'agent → agent',
      `${CHAIN_CALLS} calls of a loop agent calling the prompt agent, 2 at a time`,
      () => together(CHAIN_CALLS, 2, relay),
      () => together(6, 2, relay),
    );
  if (wanted('steady tool'))
    await measure(
      'steady tool',
      `a tool called every second for ${STEADY_SECONDS} s`,
      async () => {
        const pending: Promise<{ status: number }>[] = [];
        for (let i = 0; i < STEADY_SECONDS; i++) {
          pending.push(d.request('POST', '/local/bench-tool/v1/run', { body: { i } }).then(failure));
          await sleep(1000);
        }
        const statuses = (await Promise.all(pending)).map((r) => r.status);
        return { calls: statuses.length, failed: statuses.filter((s) => s !== 200).length };
      },
      tool,
    );
  if (wanted('sparse tools'))
    await measure(
      'sparse tools',
      `${SPARSE_TOOLS} tools of as many workspaces, one call each, 12 s apart, until their runners stopped`,
      async () => {
        const accounts = [];
        for (let i = 0; i < SPARSE_TOOLS; i++) accounts.push(await publishTool(d, `sparse-${i}`));
        // Publishing is not the shape: start its window after it.
        await resetMeter(meterEndpoint);
        const floorTasks = await openTasks(meterEndpoint);
        const pending: Promise<{ status: number }>[] = [];
        for (const a of accounts) {
          pending.push(
            d.request('POST', `/${a.org}/bench-tool/v1/run`, { key: a.key, body: { n: 1 } }).then(failure),
          );
          await sleep(12_000);
        }
        const statuses = (await Promise.all(pending)).map((r) => r.status);
        // Until the runners the calls started have stopped (the floor's stay).
        const until = Date.now() + SPARSE_TAIL_MINUTES * 60_000;
        while (Date.now() < until) {
          const open = await openTasks(meterEndpoint);
          if (open <= floorTasks) break;
          await sleep(10_000);
        }
        return { calls: statuses.length, failed: statuses.filter((s) => s !== 200).length };
      },
    );

  /** The long and short runs as their caller saw them (bench/aws-cost-long-run.ts), and a poll's price. */
  let longRun: LongRunSeen | undefined;
  let shortRun: LongRunSeen | undefined;
  if (wanted('long run')) {
    const caller = runCaller(d, meterEndpoint, (line) => failures.push(line));
    await measure(
      'long run',
      `one run (\`Prefer: respond-async\`) of a prompt agent, the model answering in ${LONG_RUN_SECONDS} s, polled every ${POLL_SECONDS} s`,
      async () => {
        longRun = await caller.longRun();
        return { calls: 1, failed: longRun?.status === 'succeeded' ? 0 : 1 };
      },
      caller.warmUp,
    );
    await measure(
      'short run',
      `the same run, the model answering in ${MODEL_MS} ms, polled every ${POLL_SECONDS} s`,
      async () => {
        shortRun = await caller.shortRun();
        return { calls: 1, failed: shortRun?.status === 'succeeded' ? 0 : 1 };
      },
      caller.warmUp,
    );
    const ended = longRun?.runId;
    if (ended)
      await measure(
        'run poll',
        `${RUN_POLLS} polls (\`GET /runs/{id}\`) of the ended run, one after another`,
        () => together(RUN_POLLS, 1, () => caller.poll(ended)),
        () => caller.poll(ended),
      );
  }

  const idle = results.find((r) => r.name === 'idle') as ShapeResult;
  const idleRate = perSecond(priceSnapshot(idle.snapshot), idle.snapshot.windowSeconds);
  const $ = (v: number) => (v >= 100 ? `$${v.toFixed(0)}` : v >= 1 ? `$${v.toFixed(2)}` : `$${v.toFixed(3)}`);

  const shapeRows = results
    .filter((r) => r.name !== 'idle')
    .map((r) => {
      const cost = perMillionCalls(priceSnapshot(r.snapshot), r.snapshot.windowSeconds, r.calls, idleRate);
      const target = TARGETS[r.name];
      const verdict =
        target === undefined ? '' : cost.total <= target ? `≤ $${target}: met` : `≤ $${target}: **not met**`;
      const why = [...new Set(r.failures.map((f) => f.split(' ')[0]))].join(', ');
      return `| ${r.name} | ${r.what}${r.failed ? ` (${r.failed} failed: ${why})` : ''} | ${SERVICES.map((k) => $(cost[k])).join(' | ')} | **${$(cost.total)}** | ${verdict} |`;
    });

  const idleMonths = (['production defaults', '-c stage=dev'] as const).map((context) => {
    const standing = standingResourcesOf(context === '-c stage=dev' ? { stage: 'dev' } : {});
    const month = idleMonth(standing, idleRate, AWS_PRICES, {
      perSecond: poolPerSecond(idle.snapshot),
      measuredFloor: idle.snapshot.standing.warmPoolFloor.tasks,
    });
    const items = Object.entries(month.items)
      .filter(([, v]) => v >= 0.005)
      .map(([k, v]) => `${k} ${$(v)}`)
      .join(', ');
    const target = context === '-c stage=dev' ? 25 : 60;
    return `| ${context} | **${$(month.total)}** | ${month.total <= target ? `≤ $${target}: met` : `≤ $${target}: **not met**`} | ${items} |`;
  });

  // Lambda memory from measurement: each function's configured memory, the most it held, GB-s a call.
  const functions = new Map<
    string,
    { memoryMb: number; maxUsed: number; requests: number; coldStarts: number; gbSeconds: number }
  >();
  for (const r of results) {
    for (const [name, u] of Object.entries(r.snapshot.lambda)) {
      const f = functions.get(name) ?? {
        memoryMb: u.memoryMb,
        maxUsed: 0,
        requests: 0,
        coldStarts: 0,
        gbSeconds: 0,
      };
      f.maxUsed = Math.max(f.maxUsed, u.maxMemoryUsedMb);
      f.requests += u.requests;
      f.coldStarts += u.coldStarts;
      f.gbSeconds += u.gbSeconds;
      functions.set(name, f);
    }
  }
  const memoryRows = [...functions]
    .sort(([, a], [, b]) => b.gbSeconds - a.gbSeconds)
    .map(
      ([name, f]) =>
        `| ${name} | ${f.memoryMb} MB | ${f.maxUsed.toFixed(0)} MB | ${f.requests} | ${f.coldStarts} | ${(f.gbSeconds / f.requests).toFixed(3)} |`,
    );
  const unmetered = Object.entries(
    results.reduce<Record<string, number>>((all, r) => {
      for (const [op, n] of Object.entries(r.snapshot.dynamodb.unmeteredRequests))
        all[op] = (all[op] ?? 0) + n;
      return all;
    }, {}),
  );

  // Where a call's request units go: each shape's DynamoDB requests a call, by operation.
  const per = (n: number, calls: number) => (n / calls).toFixed(1).replace(/\.0$/, '');
  const dynamoRows = results
    .filter((r) => r.name !== 'idle' && r.calls > 0)
    .map((r) => {
      const ops = Object.entries(r.snapshot.dynamodb.byOperation).sort(([a], [b]) => a.localeCompare(b));
      const cell = (unit: 'read' | 'write') =>
        ops
          .filter(([, o]) => o[unit] > 0)
          .map(([op, o]) => `${op} ${per(o.requests, r.calls)} (${per(o[unit], r.calls)})`)
          .join(', ') || 'none';
      const { readRequestUnits: rru, writeRequestUnits: wru } = r.snapshot.dynamodb;
      return `| ${r.name} | ${per(rru, r.calls)} | ${cell('read')} | ${per(wru, r.calls)} | ${cell('write')} |`;
    });

  const table = [
    `${machineLine()}. Emulated deployment (its template: the warm pool's defaults, services on), every ECS task starting in ${TASK_START_MS} ms, each Lambda instance held to its memory's share of a vCPU, the model answering in ${MODEL_MS} ms; priced with the us-east-1 list prices of bench/aws-prices.ts checked ${PRICES_CHECKED}. Took ${((Date.now() - started) / 60_000).toFixed(0)} min.`,
    '',
    '| shape | measured | Lambda | API Gateway | DynamoDB | Fargate | S3 | per million calls | target |',
    '| --- | --- | --: | --: | --: | --: | --: | --: | --- |',
    ...shapeRows,
    '',
    `Idle month (730 h): the templates' standing resources, plus what the idle deployment metered in ${IDLE_MINUTES} min, scaled.`,
    '',
    '| context | per month | target | items |',
    '| --- | --: | --- | --- |',
    ...idleMonths,
    '',
    'Lambda memory, measured over every shape (max used: the peak resident set, as the REPORT line gives it; cold starts: in the windows, their INIT billed):',
    '',
    '| function | configured | max used | invocations | cold starts | GB-s a call |',
    '| --- | --: | --: | --: | --: | --: |',
    ...memoryRows,
    '',
    'DynamoDB a call, by operation: requests (their units), the idle deployment’s included:',
    '',
    '| shape | read units | reads | write units | writes |',
    '| --- | --: | --- | --: | --- |',
    ...dynamoRows,
    ...(unmetered.length
      ? [
          '',
          `DynamoDB requests that did not ask for their consumed capacity (priced at 1 unit each, a floor): ${unmetered.map(([op, n]) => `${op} ${n}`).join(', ')}.`,
        ]
      : []),
  ].join('\n');
  process.stdout.write(`${table}\n`);
  // Some shapes only: printed, the doc's table left as it is (it would lose the other rows).
  if (!ONLY)
    await writeReport('aws-cost', 'AWS cost: a call, a tool, an idle month', table, `aws-cost-${LABEL}`);

  const shape = (name: string) => results.find((r) => r.name === name);
  const [long, short, poll] = [shape('long run'), shape('short run'), shape('run poll')];
  if (long && short && poll && longRun && shortRun) {
    const longTable = longRunTable(
      { long, short, poll, streamed: shape('streamed') },
      idleRate,
      { long: longRun, short: shortRun },
      MODEL_MS / 1000,
    );
    process.stdout.write(`\n${longTable}\n`);
    await writeReport('aws-cost', "A long run's waiting", longTable, 'aws-cost-long-run');
  }
} finally {
  await d.close();
  await fake.close();
}

async function together(
  calls: number,
  concurrency: number,
  call: () => Promise<{ status: number }>,
): Promise<{ calls: number; failed: number }> {
  let next = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < calls) if ((await call()).status !== 200) failed++;
    }),
  );
  return { calls, failed };
}

/** Sandbox tasks not yet stopped (the meter asks ECS before it answers). */
async function openTasks(endpoint: string): Promise<number> {
  return (await readMeter(endpoint)).fargateOpenTasks;
}
