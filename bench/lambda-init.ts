#!/usr/bin/env node
/**
 * `npm run bench:lambda-init`: what a Lambda cold start reads and how long it
 * takes to import, for the handlers that serve agent calls against the tasks handler, side by side
 * in one run.
 *
 * The CDK app is synthesized (its local bundling, lib/lambda-bundling.ts), and each measured
 * function's asset is copied to a folder with no node_modules above it, as Lambda has only the
 * asset. Per repeat, in an order rotated per repeat, a fresh `node` (this one: the runtime's major
 * version, test/cdk/lambda-assets.test.ts checks it) imports the asset's `index.mjs` with the
 * environment the template gives the function; the import is timed inside that process
 * (performance.now() around the `import()`), so Node's own start-up is left out and reported apart
 * as the import of an empty module. Per handler: the entry file's size, what the import reads (the
 * entry and the chunks it imports statically, read from the files), the median import time, and
 * the median of the per-repeat ratios to the tasks handler. Results go to docs/performance.md.
 *
 * With BENCH_BASELINE=<commit> (checked out for the run) or BENCH_BASELINE_DIR=<another checkout>
 * (its node_modules linked; bench/baseline-checkout.ts), that commit's tasks and calls are
 * synthesized too and measured in the same rotation: the "(before)" rows.
 *
 *   npm run bench:lambda-init                 BENCH_REPEATS=n (default 7); --no-write to only print
 *   BENCH_BASELINE=<commit> npm run bench:lambda-init
 */
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { App } from 'aws-cdk-lib';
import { addAgenthostStacks } from '../lib/agenthost-app.ts';
import { type BaselineCheckout, baselineCheckout, commitOf } from './baseline-checkout.ts';
import { machineLine, median, writeReport } from './report.ts';

const execFileAsync = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const REPEATS = Number(process.env.BENCH_REPEATS ?? 7);
/** The issue's targets: calls ÷ tasks, and every entry chunk. */
const RATIO_TARGET = 1.5;
const ENTRY_TARGET_KB = 500;

interface CfnFunction {
  Type: string;
  Properties: { Code: { S3Key?: unknown }; Environment?: { Variables?: Record<string, unknown> } };
}

interface Handler {
  /** The row: the module, with " (before)" for the baseline checkout's. */
  label: string;
  /** The row of the same checkout's tasks handler, the reference of this row's ratio. */
  reference: string;
  dir: string;
  env: Record<string, string>;
  entryBytes: number;
  loadBytes: number;
  /**
   * For a handler that calls models: the chunks a first OpenAI prompt call imports (the LLM
   * gateway's, and the OpenAI provider's where it has one of its own), relative to `dir`.
   */
  firstCall: string[];
}

/** The LLM gateway's chunk, and any other chunk that holds the OpenAI provider's factory. */
function firstCallChunks(dir: string): string[] {
  const chunks = existsSync(join(dir, 'chunks')) ? readdirSync(join(dir, 'chunks')) : [];
  const gateway = chunks.find((f) => f.startsWith('ai-sdk-gateway-'));
  if (!gateway) return [];
  const provider = chunks.filter(
    (f) => f !== gateway && readFileSync(join(dir, 'chunks', f), 'utf8').includes('createOpenAI'),
  );
  return [gateway, ...provider].map((f) => `./chunks/${f}`);
}

/** The template's variables, with tokens (imports, refs) as plain placeholders. */
function environmentOf(fn: CfnFunction): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(fn.Properties.Environment?.Variables ?? {})) {
    env[name] =
      typeof value === 'string'
        ? value
        : name.endsWith('_URL')
          ? 'https://api.example.test/prod'
          : `placeholder-${name.toLowerCase()}`;
  }
  return env;
}

/** Static imports of an esbuild ESM output file (`import ... from "./x.mjs"`, `import "./x.mjs"`), not import(). */
const STATIC_IMPORT = /(?:\bfrom|\bimport)\s*["'](\.{1,2}\/[^"']+\.mjs)["']/g;

/** The bytes a cold start reads: the entry and every file it imports statically, transitively. */
function loadedBytes(entry: string): number {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) visit(join(dirname(file), m[1]!));
  };
  visit(entry);
  return [...seen].reduce((sum, f) => sum + statSync(f).size, 0);
}

/** The CDK app's function names (their logical ids' start) and the modules they serve. */
const MODULE_OF = {
  Tasks: 'tasks',
  Calls: 'calls',
  ScheduleRuns: 'schedule-runs',
  AgentAuthoring: 'agent-authoring',
  Health: 'health',
} as const;
type FunctionName = keyof typeof MODULE_OF;

/** Synthesizes an app into a temporary folder and copies each named function's asset into `bare`. */
function synthesize(
  addStacks: (app: App) => unknown,
  names: FunctionName[],
  bare: string,
  suffix: string,
): Handler[] {
  const outdir = mkdtempSync(join(tmpdir(), 'agenthost-init-cdk-'));
  try {
    const app = new App({ outdir });
    addStacks(app);
    const assembly = app.synth();
    const functions = assembly.stacks.flatMap((stack) =>
      Object.entries((stack.template as { Resources: Record<string, CfnFunction> }).Resources).filter(
        ([, r]) => r.Type === 'AWS::Lambda::Function',
      ),
    );
    return names.map((name) => {
      const found = functions.find(([id]) => new RegExp(`^${name}Function[0-9A-F]{8}$`).test(id));
      if (!found) throw new Error(`no ${name} function in the synthesized app`);
      const [, fn] = found;
      const key = String(fn.Properties.Code.S3Key);
      const label = `${MODULE_OF[name]}${suffix}`;
      const dir = join(bare, label.replace(/\W+/g, '-'));
      cpSync(join(assembly.directory, `asset.${key.slice(0, -'.zip'.length)}`), dir, { recursive: true });
      const entry = join(dir, 'index.mjs');
      return {
        label,
        reference: `tasks${suffix}`,
        dir,
        env: environmentOf(fn),
        entryBytes: statSync(entry).size,
        loadBytes: loadedBytes(entry),
        firstCall: firstCallChunks(dir),
      };
    });
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/**
 * Milliseconds a fresh Node takes to import `file` in `dir` (timed inside the process), and then
 * the `later` files (what a first model call imports; 0 when there are none).
 */
async function importMs(
  dir: string,
  file: string,
  env: Record<string, string>,
  later: string[] = [],
): Promise<{ ms: number; laterMs: number }> {
  const script = [
    `const t0 = performance.now(); await import('./${file}'); const t1 = performance.now();`,
    `for (const f of ${JSON.stringify(later)}) await import(f);`,
    'console.log(t1 - t0, performance.now() - t1);',
  ].join('\n');
  const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'example',
      ...env,
    },
    timeout: 60_000,
  });
  const [ms, laterMs] = (stdout.trim().split('\n').pop() ?? '').split(' ').map(Number);
  if (!Number.isFinite(ms) || !Number.isFinite(laterMs))
    throw new Error(`${dir}/${file}: no time printed (${stdout})`);
  return { ms: ms!, laterMs: laterMs! };
}

const kb = (bytes: number) => (bytes / 1024).toFixed(1);

async function main(): Promise<void> {
  const began = Date.now();
  const bare = mkdtempSync(join(tmpdir(), 'agenthost-init-bare-'));
  let baseline: BaselineCheckout | undefined;
  try {
    for (let dir = bare; dirname(dir) !== dir; dir = dirname(dir)) {
      if (existsSync(join(dir, 'node_modules'))) throw new Error(`${dir} has node_modules: not as on Lambda`);
    }
    baseline = baselineCheckout();
    const names = Object.keys(MODULE_OF) as FunctionName[];
    const handlers = synthesize((app) => addAgenthostStacks(app), names, bare, '');
    if (baseline) {
      const lib = (await import(join(baseline.dir, 'lib', 'agenthost-app.ts'))) as {
        addAgenthostStacks: (app: App) => unknown;
      };
      handlers.push(
        ...synthesize((app) => lib.addAgenthostStacks(app), ['Tasks', 'Calls'], bare, ' (before)'),
      );
    }
    writeFileSync(join(bare, 'empty.mjs'), 'export {};\n');
    const times = new Map<string, number[]>(handlers.map((h) => [h.label, []]));
    const firstCallTimes = new Map<string, number[]>(handlers.map((h) => [h.label, []]));
    const floor: number[] = [];
    // One import of each first, not counted: it brings the files into the page cache, where a
    // cold start on Lambda, reading its unpacked asset, usually finds them too.
    for (const h of handlers) await importMs(h.dir, 'index.mjs', h.env, h.firstCall);
    for (let r = 0; r < REPEATS; r++) {
      const order = handlers.map((_, i) => handlers[(i + r) % handlers.length]!);
      for (const h of order) {
        const { ms, laterMs } = await importMs(h.dir, 'index.mjs', h.env, h.firstCall);
        times.get(h.label)!.push(ms);
        firstCallTimes.get(h.label)!.push(laterMs);
      }
      floor.push((await importMs(bare, 'empty.mjs', {})).ms);
      const line = order.map((h) => `${h.label} ${times.get(h.label)!.at(-1)!.toFixed(0)} ms`).join(', ');
      process.stdout.write(`repeat ${r + 1}/${REPEATS}: ${line}\n`);
    }
    /** The median of the per-repeat ratios of a row to its reference. */
    const ratioOf = (h: Handler) =>
      median(times.get(h.label)!.map((ms, i) => ms / times.get(h.reference)![i]!));
    const rows = handlers.map(
      (h) =>
        `| ${h.label} | ${kb(h.entryBytes)} | ${kb(h.loadBytes)} | ${median(times.get(h.label)!).toFixed(1)} | ${ratioOf(h).toFixed(2)} | ${h.firstCall.length > 0 ? median(firstCallTimes.get(h.label)!).toFixed(1) : ''} |`,
    );
    const calls = handlers.find((h) => h.label === 'calls')!;
    const ratio = ratioOf(calls);
    const overEntry = handlers
      .filter((h) => h.reference === 'tasks' && h.entryBytes > ENTRY_TARGET_KB * 1024)
      .map((h) => h.label);
    const seconds = Math.round((Date.now() - began) / 1000);
    const table = [
      `${machineLine()}; run ${new Date().toISOString().slice(0, 10)}; \`npm run bench:lambda-init\` (${REPEATS} repeats, handlers in an order rotated per repeat after one uncounted import of each, one fresh process per import, ${seconds} s). Medians over the repeats; "÷ tasks" is the median of the per-repeat ratios to the same checkout's tasks handler${baseline ? `; "(before)": commit ${baseline.commit}, in the same rotation (this checkout is ${commitOf(ROOT)})` : ''}.`,
      '',
      '| handler | entry KB | read at import KB | import ms | ÷ tasks | then a first OpenAI call’s imports ms |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      ...rows,
      '',
      'The last column: in the same process, after the handler, the imports of a first prompt call to an OpenAI model (the LLM gateway’s chunk and the OpenAI provider’s; not ajv, which a call with a schema adds).',
      '',
      `A fresh Node's import of an empty module, in the same rotation: ${median(floor).toFixed(1)} ms (Node's own start-up is not in any figure above).`,
      '',
      'Targets:',
      '',
      `- The calls handler's import time at most ${RATIO_TARGET}× the tasks handler's: ${ratio <= RATIO_TARGET ? 'met' : '**not met**'} (${ratio.toFixed(2)}×; calls reads ${kb(calls.loadBytes)} KB at import).`,
      `- Every handler's entry chunk under ${ENTRY_TARGET_KB} KB: ${overEntry.length === 0 ? 'met by the handlers above (every handler: the "entry KB" column of the bundle table)' : `**not met** (${overEntry.join(', ')})`}.`,
    ].join('\n');
    process.stdout.write(`\n${table}\n`);
    await writeReport('lambda-init', 'Lambda cold start: import time', table);
  } finally {
    rmSync(bare, { recursive: true, force: true });
    baseline?.close();
  }
}

await main();
