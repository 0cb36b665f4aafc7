/**
 * `npm run bench:calls`: what the call gateway adds on top of the model call.
 *
 * The platform runs as its own process (`agenthost start`, local mode, SQLite) with its OpenAI
 * provider pointed at a zero-delay fake on loopback that speaks Chat Completions. In one run this
 * bench calls a prompt agent through the platform and calls the fake directly with the same
 * request the platform sends, at concurrency 1, 16 and 64, and reports the latency the platform
 * adds (p50, p99) and its calls per second. Results go to docs/performance.md.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { start as startFakeLlm } from '../test/helpers/fake-llm-providers.ts';
import { machineLine, quantile, writeReport } from './report.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const KEY = `ahk_bench_${'x'.repeat(40)}`;
const LEVELS = [1, 16, 64];
const CALLS_PER_LEVEL = Number(process.env.BENCH_CALLS ?? 3000);
const WARMUP = 300;

interface Stats {
  p50: number;
  p99: number;
  perSecond: number;
}

function stats(samples: number[], wallMs: number): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    perSecond: (samples.length / wallMs) * 1000,
  };
}

/** Sends `total` requests with `concurrency` in flight; returns each latency in ms and the wall time. */
async function drive(
  concurrency: number,
  total: number,
  send: () => Promise<number>,
): Promise<{ samples: number[]; wallMs: number }> {
  const samples: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        const s = performance.now();
        const status = await send();
        if (status !== 200) throw new Error(`a bench call answered ${status}`);
        samples.push(performance.now() - s);
      }
    }),
  );
  return { samples, wallMs: performance.now() - t0 };
}

async function main(): Promise<void> {
  const fake = await startFakeLlm({ record: false });
  const dataDir = await mkdtemp(join(tmpdir(), 'agenthost-bench-'));
  // BENCH_PROFILE=<dir> writes a CPU profile of the platform process there.
  const profile = process.env.BENCH_PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
    : [];
  const child = spawn(process.execPath, [...profile, join(ROOT, 'bin', 'agenthost.ts'), 'start'], {
    env: {
      ...process.env,
      PORT: '0',
      PLATFORM_DATA_DIR: dataDir,
      PLATFORM_LOG_LEVEL: 'warn',
      PLATFORM_BOOTSTRAP_TIER: 'enterprise',
      PLATFORM_BOOTSTRAP_API_KEY: KEY,
      OPENAI_API_KEY: 'sk-bench',
      OPENAI_BASE_URL: fake.baseUrls.openai,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  while (!/listening on (http:\/\/\S+)/.test(out)) {
    if (child.exitCode !== null) throw new Error(`platform exited:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const base = (/listening on (http:\/\/\S+)/.exec(out) as RegExpExecArray)[1] as string;
  const dispatcher = new Agent({ connections: 128, pipelining: 1, keepAliveTimeout: 30_000 });
  try {
    const publish = await request(`${base}/agents`, {
      method: 'POST',
      dispatcher,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'bench-echo',
        description: 'Benchmark agent.',
        supported_providers: ['openai'],
        prompt_template: 'Echo {{text}}',
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      }),
    });
    if (publish.statusCode !== 201)
      throw new Error(`publish answered ${publish.statusCode}: ${await publish.body.text()}`);
    await publish.body.dump();

    const callBody = JSON.stringify({ text: 'hello' });
    const viaPlatform = async () => {
      const res = await request(`${base}/local/bench-echo/v1/run`, {
        method: 'POST',
        dispatcher,
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: callBody,
      });
      await res.body.dump();
      return res.statusCode;
    };
    // The request the platform's OpenAI adapter sends, sent by us straight to the fake.
    const directBody = JSON.stringify({
      model: 'gpt-5-mini',
      messages: [
        { role: 'system', content: 'Benchmark agent.' },
        { role: 'user', content: 'Echo hello' },
      ],
    });
    const direct = async () => {
      const res = await request(`${fake.baseUrls.openai}/chat/completions`, {
        method: 'POST',
        dispatcher,
        headers: { authorization: 'Bearer sk-bench', 'content-type': 'application/json' },
        body: directBody,
      });
      await res.body.dump();
      return res.statusCode;
    };

    await drive(8, WARMUP, viaPlatform);
    await drive(8, WARMUP, direct);
    const rows: string[] = [];
    const lines: string[] = [];
    for (const c of LEVELS) {
      const d = await drive(c, CALLS_PER_LEVEL, direct);
      const v = await drive(c, CALLS_PER_LEVEL, viaPlatform);
      const ds = stats(d.samples, d.wallMs);
      const vs = stats(v.samples, v.wallMs);
      const added = { p50: vs.p50 - ds.p50, p99: vs.p99 - ds.p99 };
      rows.push(
        `| ${c} | ${ds.p50.toFixed(2)} | ${ds.p99.toFixed(2)} | ${vs.p50.toFixed(2)} | ${vs.p99.toFixed(2)} | ${added.p50.toFixed(2)} | ${added.p99.toFixed(2)} | ${Math.round(vs.perSecond)} |`,
      );
      lines.push(
        `concurrency ${c}: direct p50 ${ds.p50.toFixed(2)} ms p99 ${ds.p99.toFixed(2)} ms; via platform p50 ${vs.p50.toFixed(2)} ms p99 ${vs.p99.toFixed(2)} ms; added p50 ${added.p50.toFixed(2)} ms p99 ${added.p99.toFixed(2)} ms; ${Math.round(vs.perSecond)} calls/s`,
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    const table = [
      `${machineLine()}; ${CALLS_PER_LEVEL} calls per level after ${WARMUP} warm-up calls; run ${new Date().toISOString().slice(0, 10)}.`,
      '',
      '| concurrency | direct p50 ms | direct p99 ms | platform p50 ms | platform p99 ms | added p50 ms | added p99 ms | platform calls/s |',
      '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...rows,
    ].join('\n');
    await writeReport('calls', 'Call gateway overhead', table);
  } finally {
    await dispatcher.close();
    child.kill('SIGTERM');
    await once(child, 'exit');
    await fake.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
