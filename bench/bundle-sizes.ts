#!/usr/bin/env node
/**
 * Bundles every resource module's Lambda handler exactly as the CDK app does (the options come
 * from lib/lambda-bundling.ts, shared with the platform-function construct), writes each bundle's
 * size to docs/performance.md and exits non-zero if one exceeds the per-handler budget.
 *
 *   npm run bundle-sizes            measure, rewrite the table in docs/performance.md
 *   npm run bundle-sizes -- --check measure only, leave the docs alone (--no-write too)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { version as esbuildVersion, type Metafile } from 'esbuild';
import { MODULES, type ResourceModule } from '../functions/platform/routes.ts';
import { PROJECT_ROOT } from '../lib/constructs/platform-function.ts';
import { cachedBuildSync } from '../lib/esbuild-cache.ts';
import { esbuildBuildOptions, LAMBDA_ESBUILD_TARGET, LAMBDA_HANDLER_FILE } from '../lib/lambda-bundling.ts';
import { JOB_ACCESS, MODULE_ACCESS, type ModuleAccess } from '../lib/module-access.ts';

/**
 * Per-handler budget, on the whole asset: a Lambda's cold start grows with the code it must read,
 * parse and evaluate, and what a cold start leaves to a dynamic import() the first requests load.
 * 580 KB is what every handler carries: the store's DynamoDB client with the SDK core, zod, the
 * route table with every operation's schemas and description (and the streamed answers' events as
 * a schema: a call's, and a run's, whose routes and run document came with docs/runs.md), the Fetch API edge the local platform serves too (functions/edge/: the
 * route matched, the body read, the request rate's admission, Accept's negotiation), and the
 * OpenTelemetry settings of the shared config; plus code splitting's chunk glue (about 30 KB a
 * handler, lib/lambda-bundling.ts), in exchange for which a cold start reads about a third of the
 * asset. The table's descriptions serve /openapi.json alone; leaving them out of the other
 * handlers is the next cut.
 */
export const BUDGET_BYTES = 580 * 1024;

/**
 * What any handler's cold start may read, exceptions none: the entry chunk and
 * the chunks it imports statically. What only some requests need (a model provider's package, the
 * sandbox's clients, ajv for users' schemas) is left to a dynamic import() and does not count.
 */
export const LOAD_BUDGET_BYTES = 500 * 1024;

/** The handlers whose cold start may read more, each with its reason. */
export const LOAD_BUDGET_EXCEPTIONS: Partial<Record<HandlerName, { bytes: number; reason: string }>> = {
  'agent-authoring': {
    bytes: 565 * 1024,
    reason:
      'publish, patch and fork each check the users’ JSON Schemas in the manifest (ajv with re2js, about 290 KB), inside the manifest parser’s synchronous zod schema; the SKILL.md reader (yaml) and the archive readers (tar, yauzl) are imported by the routes that need them. Like every handler it also reads the route table, whose schemas type every body of /openapi.json and describe every operation, and the Fetch API edge (functions/edge/: the route matched, the body read and counted as Lambda’s event carries it, the request rate’s admission, the answer built by the function itself)',
  },
};

export function loadBudgetOf(module: HandlerName): number {
  return LOAD_BUDGET_EXCEPTIONS[module]?.bytes ?? LOAD_BUDGET_BYTES;
}

/**
 * The few modules allowed more, each with its reason. Only author-facing writes, never a path
 * that serves agent calls or the public directory.
 */
/** Every Lambda measured: the HTTP modules and the jobs (functions/jobs/). */
export type HandlerName = ResourceModule | keyof typeof JOB_ACCESS;

export const BUDGET_EXCEPTIONS: Partial<Record<HandlerName, { bytes: number; reason: string }>> = {
  openapi: {
    bytes: 585 * 1024,
    reason:
      'serves /openapi.json, built from the route table with every schema and description, so it carries the most of the table’s text of any handler: a description for every operation, the call route’s Server-Sent Events answer and its events as a schema, the trace route',
  },
  agents: {
    bytes: 585 * 1024,
    reason:
      'reads agent records and their logs, and serves a call’s trace: its reading and who-sees-what (core/traces/trace-read.ts and the stored form it parses, about 3 KB), on top of what every handler carries',
  },
  calls: {
    bytes: 3080 * 1024,
    reason:
      'the agent-call route: the Vercel AI SDK with its four provider packages (about 600 KB; a call imports its provider’s alone, on that provider’s first call), the SDK’s own zod, bundled from zod’s CommonJS build (about 600 KB with its locales; kept apart from the platform’s zod so that the cold start does not read it, see lib/lambda-bundling.ts), for sandboxed runs the ECS and S3 clients (about 330 KB), and ajv with re2js, the linear-time engine for users’ schema patterns (about 290 KB; a backtracking pattern froze every tenant); each loads on its first use; and the runs that outlive their request (edge/async-call.ts, core/runs/: their record, events, follower and cancel, about 6 KB), so the cold start reads about 240 KB (the "at load" column). With the sandbox load its warm runners and runners by demand (the pool and its claims, its ceiling slots, the idle wait that follows a pair’s traffic, Fargate sizes, the wait for capacity); with a call’s first span the OpenTelemetry SDK (its tracer, about 55 KB), and only when export is configured its OTLP exporters with the signed X-Ray transport; and, since runs announce their end, the Lambda client that queues a run’s completion webhook to the alert-delivery function with the outbound URL checks (about 130 KB), loaded when a run names a webhook; and a run’s steps, recorded so that another process carries the run on (a loop’s model requests and tool calls, its working directory, its admission, charge and credential: core/calls/recorded-call.ts, core/calls/recorded-tools.ts, core/calls/workdir-snapshots.ts, about 6 KB)',
  },
  schedules: {
    bytes: 670 * 1024,
    reason:
      'schedule records keep EventBridge Scheduler in step on every change, so this module carries the Scheduler client (about 60 KB with its share of the SDK core) besides the cron parser (croner) and the outbound URL checks for alert webhooks, the zod schemas that check the items it reads (schedules, their runs and timeline, agent versions: about 3 KB), and the reading back of runs’ outputs stored apart with the pages bounded by size (about 3 KB), on top of what every handler carries',
  },
  'api-keys': {
    bytes: 605 * 1024,
    reason:
      'makes the account’s webhook signing secret for runs’ completion webhooks (POST /api-keys/webhook-secret), a value kept in Secrets Manager, so it carries that client (about 30 KB) on top of what every handler carries, as `secrets` does',
  },
  secrets: {
    bytes: 605 * 1024,
    reason:
      'writes secret values to Secrets Manager, so it carries that client (about 30 KB) on top of what every handler carries',
  },
  billing: {
    bytes: 850 * 1024,
    reason:
      'takes payments: Stripe’s SDK (about 250 KB) and the Secrets Manager client that reads Stripe’s keys; only the billing routes carry them',
  },
  housekeeping: {
    bytes: 710 * 1024,
    reason:
      'deletes the bundles of purged agent versions, so it carries the S3 client (about 155 KB) beside the store’s DynamoDB client, which asks DynamoDB what each request consumed; it runs on a five-minute schedule, never behind API Gateway',
  },
  'sandbox-pool': {
    bytes: 840 * 1024,
    reason:
      'keeps the ECS sandbox’s warm runner pool at its floor: it starts runner tasks and uploads their program and manifest, so it carries the ECS and S3 clients and the presigner (about 330 KB) besides the store’s DynamoDB client; it runs every minute from an EventBridge rule, never behind API Gateway',
  },
  services: {
    bytes: 1020 * 1024,
    reason:
      'deploys always-on services on AWS: the ECS, Elastic Load Balancing v2, Application Auto Scaling and CloudWatch Logs clients (about 400 KB together) are inherent to deploy, restart, pause, delete and logs',
  },
  'service-events': {
    bytes: 1070 * 1024,
    reason:
      'supervises services from ECS task state changes: a pause goes through the same ECS, load balancer and scaling clients as `services`; it is invoked by EventBridge, not behind API Gateway; a restart is a span (the OpenTelemetry SDK and its exporters, about 60 KB, loaded with the first span)',
  },
  'schedule-runs': {
    bytes: 3140 * 1024,
    reason:
      'the schedule trigger and webhook routes run agents synchronously through the same call path as `calls`, so they carry the same SDKs (the ECS sandbox’s warm runners, the OpenTelemetry SDK and its exporters, provider errors told by kind, the stream’s redaction and token meter), plus the Lambda client that queues alerts',
  },
  mcp: {
    bytes: 3140 * 1024,
    reason:
      'POST /mcp: a tool call is an agent call through the same call path as `calls`, so it carries the same SDKs, plus the MCP SDK (about 70 KB; its zod is the CommonJS build the AI SDK already brings) and, for tool calls made tasks, the runs they start and read (edge/async-call.ts, core/runs/ reads and cancel, platform/mcp-tasks.ts: about 9 KB; the run’s ending, which names a completion webhook on the call route, about 3 KB more), and the hand-over of a task’s run to the run worker: the Lambda client that invokes it and the steps recorded before (about 120 KB, loaded with the first task); the SDK and the call path load with the first MCP request, so the cold start reads less than the calls Lambda’s',
  },
  'run-worker': {
    bytes: 3150 * 1024,
    reason:
      'runs a run to its end as a Lambda durable function: the whole call path as `calls` carries it (the AI SDK and its providers, the ECS sandbox, the OpenTelemetry SDK), AWS’s durable execution SDK (about 60 KB with the Lambda client it checkpoints through), and the Lambda client that queues a run’s completion webhook; invoked asynchronously by a run’s hand-over, never behind API Gateway',
  },
  'schedule-fire': {
    bytes: 3080 * 1024,
    reason:
      'runs scheduled slots through the same call path as `calls`, with the OpenTelemetry SDK and its exporters (not behind API Gateway: no cold-start cost to a caller)',
  },
  'agent-authoring': {
    bytes: 1350 * 1024,
    reason:
      'publish, patch, upload and fork: the manifest validators (ajv for users’ JSON Schemas with re2js, its linear-time pattern engine, yaml for SKILL.md), the archive readers (tar, yauzl) and the S3 client are inherent to these routes; they serve authors publishing, not calls (yaml and the archive readers load with the routes that use them); like every handler it carries the route table, which grew with the run webhook’s header and signing-secret route',
  },
};

/** What is over budget in a handler: its whole asset, or what its cold start reads. */
export function overBudget(s: BundleSize): string[] {
  return [
    ...(s.bytes > budgetOf(s.module) ? [`asset ${kb(s.bytes)} KB > ${kb(budgetOf(s.module))} KB`] : []),
    ...(s.loadBytes > loadBudgetOf(s.module)
      ? [`at load ${kb(s.loadBytes)} KB > ${kb(loadBudgetOf(s.module))} KB`]
      : []),
  ];
}

export function budgetOf(module: HandlerName): number {
  return BUDGET_EXCEPTIONS[module]?.bytes ?? BUDGET_BYTES;
}

const DOC = join(PROJECT_ROOT, 'docs', 'performance.md');
const START = '<!-- bundle-sizes:start (written by npm run bundle-sizes) -->';
const END = '<!-- bundle-sizes:end -->';

export interface BundleSize {
  module: HandlerName;
  /** Every file of the asset: what is deployed. */
  bytes: number;
  /** The entry chunk alone: the handler's `index.mjs`. */
  entryBytes: number;
  /** What a cold start reads: the entry and the chunks it imports statically. */
  loadBytes: number;
  /** The largest contributors: npm packages by name, our own code as "functions/". */
  largest: { name: string; bytes: number }[];
  /** Externals imported statically: they would be loaded, and fail, at cold start. */
  staticExternals: string[];
}

export async function measureBundles(): Promise<BundleSize[]> {
  // Where esbuild is told the asset goes: its chunks' names are relative to it; nothing is written.
  const dir = join(tmpdir(), 'agenthost-bundles');
  const sizes: BundleSize[] = [];
  const handlers: [HandlerName, string, ModuleAccess][] = [
    ...MODULES.map((m): [HandlerName, string, ModuleAccess] => [
      m,
      join('http', `${m}.ts`),
      MODULE_ACCESS[m],
    ]),
    ...Object.entries(JOB_ACCESS).map(([j, access]): [HandlerName, string, ModuleAccess] => [
      j as HandlerName,
      join('jobs', `${j}.ts`),
      access,
    ]),
  ];
  for (const [module, file, access] of handlers) {
    const entry = join(PROJECT_ROOT, 'functions', file);
    const result = cachedBuildSync({
      ...esbuildBuildOptions(access, entry, join(dir, module)),
      absWorkingDir: PROJECT_ROOT,
      logLevel: 'warning',
    });
    const outputs = Object.values(result.metafile.outputs);
    if (outputs.length === 0) throw new Error(`esbuild produced no output for ${module}`);
    const atStart = loadedAtStart(result.metafile);
    sizes.push({
      module,
      bytes: outputs.reduce((sum, o) => sum + o.bytes, 0),
      entryBytes: atStart[0]?.bytes ?? 0,
      loadBytes: atStart.reduce((sum, o) => sum + o.bytes, 0),
      largest: largestContributors(outputs),
      staticExternals: atStart.flatMap((o) =>
        o.imports
          .filter((i) => i.external && !isBuiltin(i.path) && i.kind !== 'dynamic-import')
          .map((i) => i.path),
      ),
    });
  }
  return sizes;
}

/**
 * The output files a cold start loads: the entry and every chunk it imports statically, directly
 * or through another (not the chunks behind a dynamic import()).
 */
export function loadedAtStart(metafile: Metafile): Metafile['outputs'][string][] {
  const outputs = metafile.outputs;
  // The handler's file (LAMBDA_HANDLER_FILE); each dynamic import()'s chunk is an entry point too.
  const entry = Object.keys(outputs).find(
    (path) => path.endsWith(`/${LAMBDA_HANDLER_FILE}`) && !path.includes('/chunks/'),
  );
  const seen = new Set<string>();
  const visit = (path: string) => {
    if (seen.has(path) || !outputs[path]) return;
    seen.add(path);
    for (const i of outputs[path].imports) if (!i.external && i.kind === 'import-statement') visit(i.path);
  };
  if (!entry) throw new Error(`no ${LAMBDA_HANDLER_FILE} among the outputs`);
  visit(entry);
  return [...seen].map((path) => outputs[path]!);
}

function largestContributors(outputs: Metafile['outputs'][string][]): { name: string; bytes: number }[] {
  const byName = new Map<string, number>();
  for (const [file, input] of outputs.flatMap((o) => Object.entries(o.inputs))) {
    const at = file.lastIndexOf('node_modules/');
    let name = 'functions/';
    if (at >= 0) {
      const parts = file.slice(at + 'node_modules/'.length).split('/');
      name = parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? file);
    }
    byName.set(name, (byName.get(name) ?? 0) + input.bytesInOutput);
  }
  return [...byName.entries()]
    .map(([name, bytes]) => ({ name, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 4);
}

const kb = (bytes: number) => (bytes / 1024).toFixed(1);

export function renderTable(sizes: BundleSize[]): string {
  const header = [
    'handler',
    'bytes',
    'KB',
    'budget KB',
    'entry KB',
    'at load KB',
    'within',
    'largest contributors (KB)',
  ];
  const rightAligned = [false, true, true, true, true, true, false, false];
  const rows = sizes.map((s) => [
    s.module,
    s.bytes.toLocaleString('en-US'),
    kb(s.bytes),
    kb(budgetOf(s.module)),
    kb(s.entryBytes),
    kb(s.loadBytes),
    overBudget(s).length === 0 ? 'ok' : `**over** (${overBudget(s).join(', ')})`,
    s.largest.map((l) => `${l.name} ${kb(l.bytes)}`).join(', '),
  ]);
  // Padded as the formatter (Biome) lays out Markdown tables, so `npm run lint` stays clean.
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (rightAligned[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join(' | ')} |`;
  const rule = `| ${widths.map((w, i) => (rightAligned[i] ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w))).join(' | ')} |`;
  const exceptions = Object.entries(BUDGET_EXCEPTIONS).map(
    ([module, e]) => `- \`${module}\` may use ${kb(e.bytes)} KB: ${e.reason}.`,
  );
  const loadExceptions = Object.entries(LOAD_BUDGET_EXCEPTIONS).map(
    ([module, e]) => `- \`${module}\` may read ${kb(e.bytes)} KB: ${e.reason}.`,
  );
  return [
    `Run ${new Date().toISOString().slice(0, 10)}: \`npm run bundle-sizes\` (the sizes depend on the commit and the lockfile, not the machine). esbuild ${esbuildVersion}, target ${LAMBDA_ESBUILD_TARGET}, ESM with code splitting, minified, no source map. KB = 1,024 bytes; "KB" is the whole asset (what "budget KB" limits), "entry KB" the handler's \`index.mjs\` alone, "at load KB" what a cold start reads (the entry and the chunks it imports statically, limited to ${kb(LOAD_BUDGET_BYTES)} KB but for the exceptions below; the rest loads at its first dynamic import()).`,
    '',
    line(header),
    rule,
    ...rows.map(line),
    '',
    'Budget exceptions (bench/bundle-sizes.ts):',
    '',
    ...exceptions,
    '',
    `Exceptions to the ${kb(LOAD_BUDGET_BYTES)} KB read at load:`,
    '',
    ...loadExceptions,
  ].join('\n');
}

const INTRO = `# Performance

## Lambda bundle sizes

What is measured: the size of each resource module's Lambda handler (\`functions/http/<module>.ts\`)
after bundling with esbuild, with the options the CDK app deploys (\`lib/lambda-bundling.ts\`, shared
by \`lib/constructs/platform-function.ts\` and the bench, so they cannot drift): ESM for Node.js 24
with code splitting (each dynamic \`import()\` a chunk of its own), minified, tree-shaken, AWS SDK
included (the pinned version, not the runtime's copy). "KB" is the whole asset, "entry KB" the
handler's \`index.mjs\` alone, "at load KB" the entry and the chunks it imports statically: what a
cold start reads before the first request.

Reproduce with:

\`\`\`sh
npm run bundle-sizes
\`\`\`

It rewrites the table below and exits non-zero if a handler is over budget.

Targets: **at most 580 KB per handler** (500 KB before code splitting, which adds about 30 KB of
chunk glue per handler), and **at most 500 KB read at load** by every handler. A Lambda cold start reads, parses and evaluates the whole
bundle before the first request is served, so init time grows with bundle size; it is paid on
every new container (scale-out, deploys, idle recycling), which for an API means user-visible
latency. Keeping each handler small also keeps deploys fast.

What keeps them small:

- ES builds of dependencies (\`mainFields: module, main\`), so esbuild can tree-shake the AWS SDK.
- Left out of every bundle, because a Lambda never loads them: the SDK's credential providers
  other than environment variables (Lambda passes the role's credentials there) with the STS/SSO
  clients they use, and the local adapters (SQLite, file vault, file bundles) that only
  \`PLATFORM_MODE=local\` imports. Modules without Secrets Manager access also leave out its client.
  Each is reached only through a dynamic \`import()\`; the bench and \`test/cdk/handler-bundles.test.ts\` fail if one
  is ever imported statically, since that would fail at load.
- No source map: Node would read and parse it at start-up with \`--enable-source-maps\`. The output is
  deterministic, so a position in a logged stack trace can be mapped by bundling the same commit
  with \`sourcemap: true\`.

When a handler is over budget, the "largest contributors" column says where to look. The usual
causes: a namespace import that esbuild cannot tree-shake (\`import { z } from 'zod'\` keeps all of
zod, its locales included; \`import * as z from 'zod'\` keeps what is used); a module every handler
imports (the route table) pulling in a heavy dependency that only one module needs; and an
adapter that the dependency factory builds eagerly in every Lambda instead of on first use (a
lazily imported client can then also be left out of the modules that never use it, see
\`lib/lambda-bundling.ts\`).

`;

function writeDoc(table: string): void {
  let doc: string;
  try {
    doc = readFileSync(DOC, 'utf8');
  } catch {
    doc = `${INTRO}${START}\n${END}\n`;
  }
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${DOC} has no ${START} ... ${END} section`);
  writeFileSync(DOC, `${doc.slice(0, start + START.length)}\n${table}\n${doc.slice(end)}`);
}

async function main(): Promise<number> {
  const sizes = await measureBundles();
  const table = renderTable(sizes);
  process.stdout.write(`${table}\n`);
  // --no-write, as every other bench spells it, or --check: measure only.
  if (!process.argv.includes('--check') && !process.argv.includes('--no-write')) {
    writeDoc(table);
    process.stdout.write(`\nWrote ${DOC}\n`);
  }
  let failed = false;
  for (const s of sizes) {
    if (overBudget(s).length > 0) {
      failed = true;
      process.stderr.write(`${s.module}: over budget: ${overBudget(s).join(', ')}\n`);
    }
    if (s.staticExternals.length > 0) {
      failed = true;
      process.stderr.write(`${s.module}: externals imported statically: ${s.staticExternals.join(', ')}\n`);
    }
  }
  return failed ? 1 : 0;
}

if (import.meta.main) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
