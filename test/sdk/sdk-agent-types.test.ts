import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import ts from 'typescript';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { agentTypes } from '../../sdk/src/agent-types.ts';
import { type AgentHostClient, type AgentRef, createClient } from '../../sdk/src/index.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const SDK_INDEX = join(ROOT, 'sdk', 'src', 'index.ts');
const CLI = join(ROOT, 'sdk', 'bin', 'agenthost-sdk.ts');

/** `agenthost-sdk ARGS` in `cwd`, as a user runs it: its exit code and output. */
function runCli(args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd, env }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });
}

/**
 * Type errors in `files` (in `dir`) as the 1-based lines they are on, per file, compiled as a
 * user's ESM project compiles them (the repository's strict options) with the SDK installed as
 * `@agenthost/sdk`.
 */
function typeErrorLines(dir: string, files: string[]): Map<string, number[]> {
  const program = ts.createProgram(
    files.map((f) => join(dir, f)),
    {
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2023.d.ts'],
      types: ['node'],
      typeRoots: [join(ROOT, 'node_modules', '@types')],
      strict: true,
      noEmit: true,
      allowImportingTsExtensions: true,
      verbatimModuleSyntax: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: true,
      paths: { '@agenthost/sdk': [SDK_INDEX] },
    },
  );
  const lines = new Map<string, number[]>(files.map((f) => [f, []]));
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const name = d.file?.fileName.startsWith(dir) ? d.file.fileName.slice(dir.length + 1) : undefined;
    const at = lines.get(name ?? '');
    if (!d.file || d.start === undefined || !at) {
      assert.fail(`unexpected diagnostic: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    }
    at.push(d.file.getLineAndCharacterOfPosition(d.start).line + 1);
  }
  return lines;
}

/** The 1-based lines of `code` marked `// type error`. */
const markedLines = (code: string) =>
  code.split('\n').flatMap((line, i) => (line.includes('// type error') ? [i + 1] : []));

const itemOf = (extra: Record<string, unknown>) => ({
  type: 'object',
  properties: { id: { type: 'string' }, ...extra },
  required: ['id'],
  additionalProperties: false,
});

describe('agent types from a published agent’s schemas (agenthost-sdk types, against the local platform)', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let client: AgentHostClient;
  let key: string;
  let dir: string;
  let cliEnv: NodeJS.ProcessEnv;

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform({
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
    });
    key = (await createAccount(p.deps, { org: 'typeco', tier: 'pro' })).api_key;
    client = createClient({ baseUrl: p.url, apiKey: key, retry: false });
    // Input and output both define an `item`, with different fields: their types must not collide.
    await client.agents.publish({
      name: 'summarise',
      description: 'Summarises text.',
      supported_providers: ['anthropic'],
      is_public: true,
      prompt_template: 'Summarise: {{text}}',
      input_schema: {
        title: 'What to summarise',
        type: 'object',
        properties: {
          text: { type: 'string', description: 'The text' },
          style: { enum: ['short', 'long'] },
          items: { type: 'array', items: { $ref: '#/$defs/item' } },
        },
        required: ['text'],
        $defs: { item: itemOf({ weight: { type: 'number' } }) },
      },
      output_schema: {
        type: 'object',
        properties: {
          summary: { type: 'string' },
          items: { type: 'array', items: { $ref: '#/$defs/item' } },
        },
        required: ['summary'],
        additionalProperties: false,
        $defs: { item: itemOf({ score: { type: 'integer' } }) },
      },
    });
    // Private (not in the public directory), without an output_schema.
    await client.agents.publish({
      name: 'meeting-notes',
      description: 'Takes notes.',
      supported_providers: ['anthropic'],
      prompt_template: 'Notes on {{topic}}',
      input_schema: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
    });
    dir = await mkdtemp(join(tmpdir(), 'agenthost-agent-types-'));
    // The user's project: ES modules, as the SDK is.
    await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    cliEnv = { ...process.env, AGENTHOST_URL: p.url, AGENTHOST_API_KEY: key };
  });
  after(async () => {
    await p.close();
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('writes a module per agent; a correct call typechecks, wrong inputs and outputs do not, and it runs', async () => {
    const out = join(dir, 'agents');
    const cli = await runCli(
      ['types', 'typeco/summarise@v1', 'typeco/meeting-notes@v1', '--out', out],
      dir,
      cliEnv,
    );
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal(
      cli.stdout,
      'wrote agents/typeco-summarise.ts (typeco/summarise@v1)\nwrote agents/typeco-meeting-notes.ts (typeco/meeting-notes@v1)\n',
    );
    const summariseModule = await readFile(join(out, 'typeco-summarise.ts'), 'utf8');
    assert.match(summariseModule, /^import type \{ AgentRef \} from "@agenthost\/sdk";$/m);
    assert.match(
      summariseModule,
      /^export const summarise: AgentRef<SummariseInput, SummariseOutput> = \{ ref: "typeco\/summarise@v1" \};$/m,
    );
    for (const name of ['SummariseInput', 'SummariseInputItem', 'SummariseOutput', 'SummariseOutputItem'])
      assert.match(summariseModule, new RegExp(`^export interface ${name} \\{$`, 'm'));
    const notesModule = await readFile(join(out, 'typeco-meeting-notes.ts'), 'utf8');
    assert.match(notesModule, /export const meetingNotes: AgentRef<MeetingNotesInput, MeetingNotesOutput>/);

    // At run time the module is a plain ref (its import is a type import). Called before the type
    // check, which holds this process's event loop (the platform's too) for seconds.
    const { summarise } = (await import(pathToFileURL(join(out, 'typeco-summarise.ts')).href)) as {
      summarise: AgentRef<{ text: string }, { summary: string; items?: { id: string; score?: number }[] }>;
    };
    assert.deepEqual(summarise, { ref: 'typeco/summarise@v1' });
    fake.enqueue({ text: JSON.stringify({ summary: 'short', items: [{ id: 'a', score: 3 }] }) });
    const result = await client.agents.call(summarise, { text: 'A long text.' });
    assert.deepEqual(result.data, { summary: 'short', items: [{ id: 'a', score: 3 }] });
    assert.match(fake.calls.at(-1)?.prompt ?? '', /Summarise: A long text\./);

    const good = `import { createClient } from '@agenthost/sdk';
import { meetingNotes } from './agents/typeco-meeting-notes.ts';
import { summarise } from './agents/typeco-summarise.ts';

const client = createClient({ baseUrl: 'http://127.0.0.1:8787' });
export async function run(): Promise<unknown[]> {
  const { data } = await client.agents.call(summarise, { text: 'hi', style: 'short', items: [{ id: 'a', weight: 1 }] });
  const summary: string = data.summary;
  const score: number | undefined = data.items?.[0]?.score;
  const again = await client.agents.typed(summarise, { timeoutMs: 1000 })({ text: 'again' });
  const notes = await client.agents.call(meetingNotes, { topic: 'planning' });
  return [summary, score, again.data.summary, notes.data.anything];
}
`;
    const bad = `import { createClient } from '@agenthost/sdk';
import { summarise } from './agents/typeco-summarise.ts';

const client = createClient({ baseUrl: 'http://127.0.0.1:8787' });
export async function run(): Promise<void> {
  await client.agents.call(summarise, { text: 42 }); // type error: text is a string
  await client.agents.call(summarise, { style: 'short' }); // type error: text is required
  await client.agents.call(summarise, { text: 'x', style: 'medium' }); // type error: not in the enum
  await client.agents.call(summarise, { text: 'x', items: [{ weight: 1 }] }); // type error: an item needs its id
  const { data } = await client.agents.call(summarise, { text: 'x' });
  const wrong: number = data.summary; // type error: the output's summary is a string
  const missing = data.title; // type error: the output has no title (additionalProperties false)
  await client.agents.typed(summarise)({ text: 1 }); // type error: the bound call checks too
  void [wrong, missing];
}
`;
    await writeFile(join(dir, 'good.ts'), good);
    await writeFile(join(dir, 'bad.ts'), bad);
    const errors = typeErrorLines(dir, ['good.ts', 'bad.ts']);
    assert.deepEqual(errors.get('good.ts'), [], 'a correct call typechecks');
    assert.deepEqual([...new Set(errors.get('bad.ts'))], markedLines(bad), 'each wrong line, and only those');
  });

  it('--out FILE.ts and --name; a private agent needs the API key; an unknown version is named', async () => {
    const file = join(dir, 'notes.ts');
    const named = await runCli(
      ['types', 'typeco/meeting-notes@v1', '--out', file, '--name', 'notes'],
      dir,
      cliEnv,
    );
    assert.equal(named.code, 0, named.stderr);
    assert.match(await readFile(file, 'utf8'), /^export const notes: AgentRef<NotesInput, NotesOutput> = /m);

    const { AGENTHOST_API_KEY: _, ...keyless } = cliEnv;
    const noKey = await runCli(['types', 'typeco/meeting-notes@v1'], dir, keyless);
    assert.equal(noKey.code, 1);
    assert.equal(
      noKey.stderr,
      'agenthost-sdk: typeco/meeting-notes@v1 is not in the public directory; an API key is needed to read your own agents\n',
    );
    const unknown = await runCli(['types', 'typeco/summarise@v9'], dir, cliEnv);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /typeco\/summarise@v9: no such public agent version, nor one of your own/);
    const usage = await runCli(['types', 'typeco/a@v1', 'typeco/b@v1', '--name', 'x'], dir, cliEnv);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--out FILE\.ts and --name need a single ref/);
  });
});

describe('agent types: a schema is data, never code', () => {
  it('drops tsType, tsEnumNames and $refs out of the document; keeps a property named tsType', async () => {
    const code = await agentTypes({
      ref: 'acme/evil@v1',
      input_schema: {
        type: 'object',
        properties: {
          a: { tsType: 'string; } console.log("pwned"); interface Y {' },
          b: { $ref: 'file:///etc/passwd' },
          c: { enum: ['x', 'y'], tsEnumNames: ['X = 1; console.log("pwned"); enum Q { Z', 'Y'] },
          tsType: { type: 'string', description: '*/ console.log("pwned"); /*' },
        },
        required: ['tsType'],
      },
      output_schema: null,
    });
    // Declarations only: the type import, interfaces and types, and the one exported ref.
    const statements = ts.createSourceFile('evil.ts', code, ts.ScriptTarget.ES2023).statements;
    const declaration = (st: ts.Statement) =>
      ts.isImportDeclaration(st) ||
      ts.isInterfaceDeclaration(st) ||
      ts.isTypeAliasDeclaration(st) ||
      ts.isVariableStatement(st);
    assert.ok(statements.every(declaration), code);
    assert.equal(statements.filter(ts.isVariableStatement).length, 1);
    assert.match(code, /^ {2}a\?: unknown;$/m);
    assert.match(code, /^ {2}b\?: unknown;$/m);
    assert.match(code, /^ {2}c\?: "x" \| "y";$/m);
    assert.match(code, /^ {2}tsType: string;$/m);
    assert.match(code, /^\s+\* \* \/ console\.log/m, 'a description stays inside its comment');
    assert.match(
      code,
      /^export interface EvilOutput \{\n {2}\[k: string\]: unknown;\n\}$/m,
      'no schema: any object',
    );
    await assert.rejects(
      agentTypes({ ref: 'ac*/me/evil@v1', input_schema: null, output_schema: null }),
      TypeError,
      'a ref lands in code and comments: only the platform’s names pass',
    );
    await assert.rejects(
      agentTypes({ ref: 'acme/evil@v1', input_schema: null, output_schema: null }, { name: 'x = 1; y' }),
      TypeError,
    );
  });

  it('stays out of createClient’s import path (the generator is a dev-time tool)', async () => {
    const importsOf = async (entry: string) => {
      const { metafile } = await build({
        entryPoints: [entry],
        bundle: true,
        write: false,
        metafile: true,
        platform: 'node',
        format: 'esm',
        packages: 'external',
        logLevel: 'silent',
      });
      return new Set(Object.values(metafile.inputs).flatMap((i) => i.imports.map((imp) => imp.path)));
    };
    const runtime = await importsOf(SDK_INDEX);
    assert.ok(runtime.has('openapi-fetch'), [...runtime].join());
    assert.ok(!runtime.has('json-schema-to-typescript'), [...runtime].join());
    const generator = await importsOf(join(ROOT, 'sdk', 'src', 'agent-types.ts'));
    assert.ok(generator.has('json-schema-to-typescript'), 'the check sees the generator where it is');
  });
});
