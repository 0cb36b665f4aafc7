/**
 * `npm run bench:first-byte`: the time to a streamed call's first byte of
 * text through the platform (`npm start`, a prompt agent, `Accept: text/event-stream`, until the
 * first `event: delta` arrives), against the model's own first byte (the same streamed request sent
 * straight to the model, until its first piece of text arrives), side by side in one run. The model
 * is the loopback fake in its own process, streaming OpenAI's format, each of its two pieces after a
 * pause of PAUSE_MS. Target: the platform adds at most 5 ms at p50. Results go to
 * docs/performance.md.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { startProcess, stop } from './bench-process.ts';
import { platformStartArgs } from './platform-command.ts';
import { machineLine, median, quantile, writeReport } from './report.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const KEY = `ahk_bench_${'x'.repeat(40)}`;
const CALLS = Number(process.env.BENCH_CALLS ?? 300);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const WARMUP = 100;
const PAUSE_MS = 5;
const TARGET_MS = 5;

/** Sends one request and resolves with the ms until a chunk of its body contains `marker`. */
async function firstByte(
  dispatcher: Agent,
  url: string,
  headers: Record<string, string>,
  body: string,
  marker: string,
): Promise<number> {
  const started = performance.now();
  const res = await request(url, { method: 'POST', dispatcher, headers, body });
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${await res.body.text()}`);
  let seen = '';
  let at: number | undefined;
  for await (const chunk of res.body) {
    seen += chunk;
    if (at === undefined && seen.includes(marker)) at = performance.now() - started;
  }
  if (at === undefined) throw new Error(`no ${marker} in ${seen}`);
  return at;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the bench's script, one measurement after the other over the processes it started and stops in its finally
async function main(): Promise<void> {
  const children: ChildProcess[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'agenthost-bench-fb-'));
  const dispatcher = new Agent({ connections: 8, keepAliveTimeout: 30_000 });
  try {
    const fake = await startProcess(
      [join(ROOT, 'bench', 'fake-llm-process.ts'), 'openai'],
      { FAKE_CHUNK_DELAY_MS: String(PAUSE_MS) },
      true,
    );
    children.push(fake.child);
    const platform = await startProcess(platformStartArgs(ROOT), {
      HOST: '127.0.0.1',
      PORT: '0',
      PLATFORM_DATA_DIR: dir,
      PLATFORM_LOG_LEVEL: 'warn',
      PLATFORM_BOOTSTRAP_TIER: 'enterprise',
      PLATFORM_BOOTSTRAP_API_KEY: KEY,
      OPENAI_API_KEY: 'sk-bench',
      OPENAI_BASE_URL: fake.url,
    });
    children.push(platform.child);
    const publish = await request(`${platform.url}/agents`, {
      method: 'POST',
      dispatcher,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'bench-stream',
        description: 'Benchmark agent.',
        supported_providers: ['openai'],
        prompt_template: 'Echo {{text}}',
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      }),
    });
    if (publish.statusCode !== 201) throw new Error(`publish answered ${publish.statusCode}`);
    await publish.body.dump();

    const direct = () =>
      firstByte(
        dispatcher,
        `${fake.url}/chat/completions`,
        { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
        JSON.stringify({
          model: 'gpt-5-mini',
          stream: true,
          stream_options: { include_usage: true },
          messages: [
            { role: 'system', content: 'Benchmark agent.' },
            { role: 'user', content: 'Echo hello' },
          ],
        }),
        '"content":"first ',
      );
    const viaPlatform = () =>
      firstByte(
        dispatcher,
        `${platform.url}/local/bench-stream/v1/run`,
        { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, accept: 'text/event-stream' },
        JSON.stringify({ text: 'hello' }),
        'event: delta',
      );
    for (let i = 0; i < WARMUP; i++) await Promise.all([direct(), viaPlatform()].map((p) => p));
    const directP50: number[] = [];
    const platformP50: number[] = [];
    const t0 = performance.now();
    for (let r = 0; r < REPEATS; r++) {
      const d: number[] = [];
      const p: number[] = [];
      // One after the other, alternating, so both see the same machine.
      for (let i = 0; i < CALLS; i++) {
        if ((i + r) % 2 === 0) {
          d.push(await direct());
          p.push(await viaPlatform());
        } else {
          p.push(await viaPlatform());
          d.push(await direct());
        }
      }
      directP50.push(
        quantile(
          d.sort((a, b) => a - b),
          0.5,
        ),
      );
      platformP50.push(
        quantile(
          p.sort((a, b) => a - b),
          0.5,
        ),
      );
      process.stdout.write(
        `repeat ${r + 1}/${REPEATS}: first byte p50 direct ${directP50.at(-1)?.toFixed(2)} ms, through the platform ${platformP50.at(-1)?.toFixed(2)} ms\n`,
      );
    }
    const added = platformP50.map((x, i) => x - (directP50[i] as number));
    const addedP50 = median(added);
    const fmt = (n: number) => n.toFixed(2);
    const table = [
      `${machineLine()}; run ${new Date().toISOString().slice(0, 10)}; \`npm run bench:first-byte\` (${REPEATS} repeats of ${CALLS} streamed calls each way, one at a time, alternating, after ${WARMUP} warm-up pairs; ${fmt((performance.now() - t0) / 1000)} s). The model (a loopback fake in its own process) streams OpenAI's format, its first piece after ${PAUSE_MS} ms. Medians over the repeats of each repeat's p50.`,
      '',
      '| first byte of text | p50 ms | each repeat |',
      '| --- | ---: | --- |',
      `| straight from the model | ${fmt(median(directP50))} | ${directP50.map(fmt).join(', ')} |`,
      `| through the platform (\`Accept: text/event-stream\`, first \`event: delta\`) | ${fmt(median(platformP50))} | ${platformP50.map(fmt).join(', ')} |`,
      `| added by the platform | ${fmt(addedP50)} | ${added.map(fmt).join(', ')} |`,
      '',
      `Target: the platform adds at most ${TARGET_MS} ms at p50: ${addedP50 <= TARGET_MS ? 'met' : '**not met**'} (${fmt(addedP50)} ms).`,
    ].join('\n');
    process.stdout.write(`${table}\n`);
    await writeReport('first-byte', 'Streamed calls: time to the first byte', table);
  } finally {
    await dispatcher.close();
    for (const child of children.reverse()) await stop(child);
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
