#!/usr/bin/env node
/**
 * Bundles every resource module's Lambda handler exactly as the CDK app does (the options come
 * from lib/lambda-bundling.ts, shared with the platform-function construct), writes each bundle's
 * size to docs/performance.md and exits non-zero if one exceeds the per-handler budget.
 *
 *   npm run bundle-sizes            measure, rewrite the table in docs/performance.md
 *   npm run bundle-sizes -- --check measure only, leave the docs alone (--no-write too)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, version as esbuildVersion, type Metafile } from 'esbuild';
import { MODULES, type ResourceModule } from '../functions/platform/routes.ts';
import { PROJECT_ROOT } from '../lib/constructs/platform-function.ts';
import { esbuildBuildOptions, LAMBDA_ESBUILD_TARGET, LAMBDA_HANDLER_FILE } from '../lib/lambda-bundling.ts';
import { JOB_ACCESS, MODULE_ACCESS, type ModuleAccess } from '../lib/module-access.ts';

/**
 * Per-handler budget, on the whole asset: a Lambda's cold start grows with the code it must read,
 * parse and evaluate, and what a cold start leaves to a dynamic import() the first requests load.
 * 540 KB: code splitting (lib/lambda-bundling.ts) costs about 30 KB per handler in chunk glue,
 * and in exchange a cold start reads about a third of the asset. 545 KB since issue 34: every
 * handler now serves the one Fetch API edge the local platform serves (functions/platform/edge/),
 * matching its request against the route table and reading its body itself, about 3 KB more than
 * the middy chain it replaced. 555 KB since issue 36: the trace route with its schema in the route
 * table every handler carries, the call route's traceparent header, and the OpenTelemetry settings
 * in the shared config (about 5 KB); the tracer itself only in the handlers that run calls. 570 KB
 * since issue 56: a description for every operation and the streamed answer's events as a schema
 * in the route table every handler carries (about 6 KB), the per-account request rate's admission
 * and Accept's negotiation in the edge every handler serves (about 3 KB), and the call's log lines
 * kept in outline (about 1 KB): every handler grew by about 10 KB. The table's descriptions serve
 * /openapi.json alone; leaving them out of the other handlers is the next cut.
 */
export const BUDGET_BYTES = 570 * 1024;

/**
 * What any handler's cold start may read, exceptions none (issue 16, point 5): the entry chunk and
 * the chunks it imports statically. What only some requests need (a model provider's package, the
 * sandbox's clients, ajv for users' schemas) is left to a dynamic import() and does not count.
 */
export const LOAD_BUDGET_BYTES = 500 * 1024;

/** The handlers whose cold start may read more, each with its reason. */
export const LOAD_BUDGET_EXCEPTIONS: Partial<Record<HandlerName, { bytes: number; reason: string }>> = {
  'agent-authoring': {
    bytes: 555 * 1024,
    reason:
      'publish, patch and fork each check the users’ JSON Schemas in the manifest (ajv with re2js, about 290 KB), inside the manifest parser’s synchronous zod schema; the SKILL.md reader (yaml) and the archive readers (tar, yauzl) are imported by the routes that need them. Like every handler it also reads the route table, whose schemas now type every body of /openapi.json (about 10 KB more since issue 17), and since issue 33 the count of a request body as Lambda’s event carries it (about 1 KB), which took it past 520 KB; since issue 34 every handler serves the one Fetch API edge (functions/platform/edge/: the route matched again, the body read and the answer built by the function itself, about 3 KB), which took it past 524 KB; since issue 36 the trace route’s schema in the route table and the OpenTelemetry settings in the shared config (about 4 KB), which took it past 528 KB; since issue 56 the operations’ descriptions in the route table, the request rate’s admission and the manifest’s loop.secrets_in_sandbox (about 11 KB), past 546 KB',
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
    bytes: 575 * 1024,
    reason:
      'serves /openapi.json, built from the route table with every schema and description, so it carries the most of the table’s text of any handler; since issue 35 the call route also documents its Server-Sent Events answer (about 1 KB), which took it past 545 KB, and since issue 36 the trace route (about 5 KB, as every handler), past 550 KB; since issue 56 a description for every operation and the streamed events as a schema (about 10 KB, as every handler), past 563 KB',
  },
  agents: {
    bytes: 575 * 1024,
    reason:
      'reads agent records and their logs, and since issue 36 serves a call’s trace: its reading and who-sees-what (core/traces/trace-read.ts and the stored form it parses, about 3 KB), which took it past 555 KB; since issue 56 what every handler carries more (about 10 KB: the operations’ descriptions, the request rate), past 569 KB',
  },
  calls: {
    bytes: 2920 * 1024,
    reason:
      'the agent-call route: the Vercel AI SDK with its four provider packages (about 600 KB; a call imports its provider’s alone, on that provider’s first call), the SDK’s own zod, bundled from zod’s CommonJS build (about 600 KB with its locales; kept apart from the platform’s zod so that the cold start does not read it, see lib/lambda-bundling.ts), for sandboxed runs the ECS and S3 clients (about 330 KB), and ajv with re2js, the linear-time engine for users’ schema patterns (about 290 KB; a backtracking pattern froze every tenant); each loads on its first use, so the cold start reads about 240 KB (the "at load" column); since issue 35 the ECS sandbox claims warm runners (the pool and its claims, about 7 KB, loaded with the sandbox), which took it past 2800 KB; since issue 36 the OpenTelemetry SDK (its tracer, about 55 KB, loaded with a call’s first span) and its OTLP exporters with the signed X-Ray transport (loaded only when export is configured), which took it past 2820 KB; since issue 57 runners by demand (the pool’s ceiling slots, the idle wait that follows a pair’s traffic, Fargate sizes, the wait for capacity) and the store asking DynamoDB what each request consumed, which took it past 2900 KB',
  },
  schedules: {
    bytes: 660 * 1024,
    reason:
      'schedule records keep EventBridge Scheduler in step on every change, so this module carries the Scheduler client (about 60 KB with its share of the SDK core) besides the cron parser (croner) and the outbound URL checks for alert webhooks, and the zod schemas that check the items it reads (schedules, their runs and timeline, agent versions: about 3 KB); plus the route table every handler carries, which documents every body of /openapi.json since issue 17 (about 10 KB), and since issue 33 the reading back of runs’ outputs stored apart and the pages bounded by size (about 3 KB); since issue 36 the trace route and the OpenTelemetry settings every handler carries (about 5 KB), which took it past 640 KB; since issue 56 the operations’ descriptions and the request rate every handler carries (about 10 KB), past 650 KB',
  },
  secrets: {
    bytes: 595 * 1024,
    reason:
      'writes secret values to Secrets Manager, so it carries that client (about 30 KB) on top of what every handler shares; it sat just under 500 KB before the service settings joined the shared config, the route table every handler carries grew about 10 KB when it came to type every body of /openapi.json (issue 17), and the shared code a little more since (the store retrying within a call’s deadline, issue 32, took it past 560 KB by 11 bytes; the trace route in the route table and the OpenTelemetry settings, issue 36, past 570 KB; the operations’ descriptions and the request rate, issue 56, past 585 KB)',
  },
  billing: {
    bytes: 850 * 1024,
    reason:
      'takes payments: Stripe’s SDK (about 250 KB) and the Secrets Manager client that reads Stripe’s keys; only the billing routes carry them',
  },
  housekeeping: {
    bytes: 710 * 1024,
    reason:
      'deletes the bundles of purged agent versions, so it carries the S3 client (about 155 KB); it runs on a five-minute schedule, never behind API Gateway; the store asking DynamoDB what each request consumed (issue 57) took it past 700 KB',
  },
  'sandbox-pool': {
    bytes: 840 * 1024,
    reason:
      'keeps the ECS sandbox’s warm runner pool at its floor (issue 35): it starts runner tasks and uploads their program and manifest, so it carries the ECS and S3 clients and the presigner (about 330 KB) besides the store’s DynamoDB client; it runs every minute from an EventBridge rule, never behind API Gateway',
  },
  services: {
    bytes: 1010 * 1024,
    reason:
      'deploys always-on services on AWS: the ECS, Elastic Load Balancing v2, Application Auto Scaling and CloudWatch Logs clients (about 400 KB together) are inherent to deploy, restart, pause, delete and logs; the capacity error and the metered store of issue 57 took it past 1000 KB',
  },
  'service-events': {
    bytes: 1070 * 1024,
    reason:
      'supervises services from ECS task state changes: a pause goes through the same ECS, load balancer and scaling clients as `services`; it is invoked by EventBridge, not behind API Gateway; since issue 36 a restart is a span (the OpenTelemetry SDK and its exporters, about 60 KB, loaded with the first span)',
  },
  'schedule-runs': {
    bytes: 3130 * 1024,
    reason:
      'the schedule trigger and webhook routes run agents synchronously through the same call path as `calls`, so they carry the same SDKs, plus the Lambda client that queues alerts; since issue 35 the warm runners of the ECS sandbox too (about 7 KB, loaded with the sandbox), which took it past 3000 KB; since issue 36 the OpenTelemetry SDK and its exporters as in `calls` (about 65 KB); since issue 56 what the call path and every handler carry more (provider errors told by kind, the stream’s redaction and token meter, the operations’ descriptions: about 27 KB), past 3100 KB',
  },
  mcp: {
    bytes: 3000 * 1024,
    reason:
      'POST /mcp: a tool call is an agent call through the same call path as `calls`, so it carries the same SDKs, plus the MCP SDK (about 70 KB; its zod is the CommonJS build the AI SDK already brings); the SDK and the call path load with the first MCP request, so the cold start reads less than the calls Lambda’s',
  },
  'schedule-fire': {
    bytes: 3080 * 1024,
    reason:
      'runs scheduled slots through the same call path as `calls` (not behind API Gateway: no cold-start cost to a caller), with the OpenTelemetry SDK and its exporters since issue 36',
  },
  'agent-authoring': {
    bytes: 1345 * 1024,
    reason:
      'publish, patch, upload and fork: the manifest validators (ajv for users’ JSON Schemas with re2js, its linear-time pattern engine, yaml for SKILL.md), the archive readers (tar, yauzl) and the S3 client are inherent to these routes; they serve authors publishing, not calls (yaml and the archive readers load with the routes that use them). Issue 32 added about 5 KB to every handler (the invitation routes in the route table, the store’s retry of DynamoDB conflicts and throttling), which took this one past 1,300 KB; issue 36 about 5 KB more (the trace route, the OpenTelemetry settings), past 1,320 KB; issue 56 about 11 KB more (the operations’ descriptions, the request rate, the manifest’s loop.secrets_in_sandbox), past 1,331 KB',
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
  const dir = mkdtempSync(join(tmpdir(), 'agenthost-bundles-'));
  try {
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
      const result = await build({
        ...esbuildBuildOptions(access, entry, join(dir, module)),
        absWorkingDir: PROJECT_ROOT,
        metafile: true,
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
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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

Targets: **at most 570 KB per handler** (500 KB before code splitting, which adds about 30 KB of
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
