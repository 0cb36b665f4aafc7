/**
 * The long run of `npm run bench:aws-cost` (bench/aws-cost.ts): a run (`Prefer: respond-async`,
 * answered 202 with its id) of a prompt agent whose model streams its answer for
 * BENCH_LONG_RUN_SECONDS (default 60, a piece a second, as the streamed shape's does for 40 s),
 * handed to the run worker (a Lambda durable function, docs/runs.md "Long runs"), its caller
 * polling `GET /runs/{id}` every BENCH_LONG_RUN_POLL_SECONDS (default 5) until it is no longer
 * running; the same run with the model answering at once (`short run`); and the price of a poll,
 * BENCH_RUN_POLLS (default 20) polls of the ended run (`run poll`). Its table splits a run's cost
 * by part, and an hour of a run's waiting is the two runs' difference over the seconds between
 * them, part by part: what waits costs, without what every run costs once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { MeterSnapshot } from '../functions/emulator/deployment-meter.ts';
import { readMeter } from '../functions/emulator/meter-endpoint.ts';
import type { Deployment } from '../test/helpers/deployment.ts';
import type { FakeLlmCall, FakeLlmResponse } from '../test/helpers/fake-llm-providers.ts';
import { perMillionCalls, priceDurable, priceSnapshot, type ServiceCosts } from './aws-cost-pricing.ts';
import { AWS_PRICES } from './aws-prices.ts';
import { machineLine } from './report.ts';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
export const LONG_RUN_SECONDS = env('BENCH_LONG_RUN_SECONDS', 60);
export const POLL_SECONDS = env('BENCH_LONG_RUN_POLL_SECONDS', 5);
export const RUN_POLLS = env('BENCH_RUN_POLLS', 20);
/** The streamed shape's call, seconds (its model sends a piece a second). */
export const STREAMED_SECONDS = 40;
/** The prompt of the long run's model request (the agent's template: `Answer {{text}}`). */
export const LONG_RUN_TEXT = 'long run';

/**
 * The long run's model: as the streamed shape's, a piece a second for the run's seconds when the
 * request is streamed, or its answer after as long when it is not. Undefined for other requests.
 */
export function longRunAnswer(call: FakeLlmCall): FakeLlmResponse | undefined {
  if (!call.prompt.includes(LONG_RUN_TEXT)) return undefined;
  return call.body?.stream === true
    ? { chunks: Array.from({ length: LONG_RUN_SECONDS }, (_, i) => `piece ${i} `), chunkDelayMs: 1000 }
    : { delayMs: LONG_RUN_SECONDS * 1000, text: 'done' };
}

export interface LongRunSeen {
  runId: string;
  /** From the 202 to the poll that found it ended. */
  seconds: number;
  polls: number;
  status: string;
}

/**
 * Runs of `bench-long` as a caller makes them: started, then polled until they are no longer
 * running; `fail` is told each failed request. `executionsEnded` waits until every durable
 * execution of the meter's window has ended (the worker's last invocation metered).
 */
export function runCaller(d: Deployment, meterEndpoint: string, fail: (line: string) => void) {
  const failed = (r: { status: number; text: string }) => {
    if (r.status !== 200 && r.status !== 202)
      fail(`${r.status} ${r.text.replace(/\s+/g, ' ').slice(0, 120)}`);
  };
  const start = async (text: string): Promise<string | undefined> => {
    const started = await d.request<{ run_id: string }>('POST', '/local/bench-long/v1/run', {
      body: { text },
      headers: { prefer: 'respond-async' },
    });
    failed(started);
    return started.status === 202 ? started.body.run_id : undefined;
  };
  const follow = async (runId: string, everyMs: number) => {
    const until = Date.now() + (LONG_RUN_SECONDS + 300) * 1000;
    let polls = 0;
    while (Date.now() < until) {
      await sleep(everyMs);
      const run = await d.request<{ status: string }>('GET', `/runs/${runId}`);
      failed(run);
      polls++;
      if (run.status === 200 && run.body.status !== 'running') return { status: run.body.status, polls };
    }
    return { status: 'still running', polls };
  };
  const executionsEnded = async () => {
    const until = Date.now() + 60_000;
    while (Date.now() < until) {
      const { durable } = await readMeter(meterEndpoint);
      if (durable.executionsEnded >= durable.executionsStarted) return;
      await sleep(500);
    }
  };
  /** One run (its model as long as `text` says), polled as a caller polls it: what the caller saw. */
  const run = async (text: string): Promise<LongRunSeen | undefined> => {
    const t0 = Date.now();
    const runId = await start(text);
    if (!runId) return undefined;
    const { status, polls } = await follow(runId, POLL_SECONDS * 1000);
    const seen = { runId, seconds: (Date.now() - t0) / 1000, polls, status };
    await executionsEnded();
    if (status !== 'succeeded') fail(`run ${status}`);
    return seen;
  };
  /** A run whose model answers at once: the calls function's and the worker's instances up. */
  const warmUp = async () => {
    const runId = await start('hi');
    if (runId) await follow(runId, 1000);
    await executionsEnded();
  };
  const poll = async (runId: string) => {
    const r = await d.request('GET', `/runs/${runId}`);
    failed(r);
    return r;
  };
  return { longRun: () => run(LONG_RUN_TEXT), shortRun: () => run('hi'), warmUp, poll };
}

interface Measured {
  calls: number;
  snapshot: MeterSnapshot;
}

const money = (v: number) =>
  Math.abs(v) < 1e-12 ? '$0' : v >= 0.01 ? `$${v.toFixed(4)}` : `$${v.toPrecision(2)}`;

/** A run's window by part: the worker's Lambda, its durable functions, and the rest, over idle. */
function parts(m: Measured, idleRate: ServiceCosts) {
  const p = AWS_PRICES.lambda;
  const worker = { requests: 0, billedMs: 0, gbSeconds: 0, cost: 0, memoryMb: 0, architecture: 'arm64' };
  // The run worker's function (RunsWorkerFunction in the nested RunsStack).
  for (const [name, u] of Object.entries(m.snapshot.lambda)) {
    if (!/Runs?Worker/.test(name)) continue;
    worker.requests += u.requests;
    worker.billedMs += u.billedMs;
    worker.gbSeconds += u.gbSeconds;
    worker.cost += u.requests * p.perRequest + u.gbSeconds * p.perGbSecond[u.architecture];
    worker.memoryMb = u.memoryMb;
    worker.architecture = u.architecture;
  }
  const durable = priceDurable(m.snapshot);
  const total =
    perMillionCalls(priceSnapshot(m.snapshot), m.snapshot.windowSeconds, m.calls, idleRate).total / 1e6;
  return { worker, durable, rest: total - worker.cost - durable.total, total };
}

/**
 * A long run's cost, by part: the run worker's Lambda (its memory held for the whole wait), its
 * durable functions' charges (operations, data written, retention), and the rest (the calls
 * function, API Gateway, DynamoDB and S3 of the start, the polls, the worker's record and the
 * run's events, the model's streamed pieces among them), over the idle deployment for as long.
 * An hour of waiting, part by part: the long run less the short one, over the seconds between
 * their models' answers, times 3,600; the rest split into the hour's polls (at the measured price
 * of a poll) and what else grows with the wait. Beside it, when the streamed shape ran, a caller
 * holding a streamed call open for an hour, at its Lambda's measured rate over its 40 s.
 */
export function longRunTable(
  m: { long: Measured; short: Measured; poll: Measured; streamed: Measured | undefined },
  idleRate: ServiceCosts,
  seen: { long: LongRunSeen; short: LongRunSeen },
  shortModelSeconds: number,
): string {
  const long = parts(m.long, idleRate);
  const short = parts(m.short, idleRate);
  const perPoll =
    perMillionCalls(priceSnapshot(m.poll.snapshot), m.poll.snapshot.windowSeconds, m.poll.calls, idleRate)
      .total / 1e6;
  const hours = (LONG_RUN_SECONDS - shortModelSeconds) / 3600;
  const hourly = (a: number, b: number) => (a - b) / hours;
  const workerHour = hourly(long.worker.cost, short.worker.cost);
  const durableHour = hourly(long.durable.total, short.durable.total);
  const pollsHour = (3600 / POLL_SECONDS) * perPoll;
  const polled = (seen.long.polls - seen.short.polls) * perPoll;
  const restHour = hourly(long.rest - polled, short.rest);
  const w = long.worker;
  const d = m.long.snapshot.durable;
  const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  const rows = [
    `| run worker (Lambda) | ${w.requests} invocation, ${(w.billedMs / 1000).toFixed(1)} s billed at ${w.memoryMb} MB ${w.architecture} (${w.gbSeconds.toFixed(1)} GB-s; the short run ${(short.worker.billedMs / 1000).toFixed(1)} s) | ${money(w.cost)} | ${money(short.worker.cost)} | ${money(workerHour)} |`,
    `| durable functions | ${d.operations} operations (the execution's start and its steps), ${kib(d.bytesWritten)} written, kept to the end and a day after: ${money(long.durable.operations)}, ${money(long.durable.written)}, ${money(long.durable.retained)} | ${money(long.durable.total)} | ${money(short.durable.total)} | ${money(durableHour)} |`,
    `| the polls | ${seen.long.polls} polls (the short run ${seen.short.polls}) at ${money(perPoll)}, measured over ${m.poll.calls} polls: the calls function, API Gateway, DynamoDB | ${money(seen.long.polls * perPoll)} | ${money(seen.short.polls * perPoll)} | ${money(pollsHour)}: ${3600 / POLL_SECONDS} polls |`,
    `| the start, the record, the events | the calls function, API Gateway, DynamoDB and S3 of the start, the worker's record, and the run's events (a piece a second of the model's answer, each logged for \`runs follow\`), over the idle deployment | ${money(long.rest - seen.long.polls * perPoll)} | ${money(short.rest - seen.short.polls * perPoll)} | ${money(restHour)} |`,
    `| **a run** | | **${money(long.total)}** | **${money(short.total)}** | **${money(workerHour + durableHour + pollsHour + restHour)}** |`,
  ];
  if (m.streamed) {
    const c = perMillionCalls(
      priceSnapshot(m.streamed.snapshot),
      m.streamed.snapshot.windowSeconds,
      m.streamed.calls,
      idleRate,
    );
    rows.push(
      `| a streamed call held open | one call streamed for ${STREAMED_SECONDS} s (the streamed shape); its Lambda at that rate for an hour, though a streamed call lasts 300 s at most | ${money(c.total / 1e6)} | | ${money((c.lambda / 1e6 / STREAMED_SECONDS) * 3600)} |`,
    );
  }
  return [
    `${machineLine()}. An emulated deployment as the table above's: a run of \`bench-long\` (a prompt agent) handed to the run worker, its caller polling every ${POLL_SECONDS} s; its model streaming its answer for ${LONG_RUN_SECONDS} s (from the 202 to the poll that found it ${seen.long.status}, ${seen.long.seconds.toFixed(1)} s), and answering in ${shortModelSeconds} s (the short run: ${seen.short.status}, ${seen.short.seconds.toFixed(1)} s). Priced with bench/aws-prices.ts, its durable functions' prices checked ${AWS_PRICES.lambda.durable.checked}.`,
    '',
    `| part | metered | the ${LONG_RUN_SECONDS} s run | the short run | an hour of waiting |`,
    '| --- | --- | --: | --: | --: |',
    ...rows,
  ].join('\n');
}
