/**
 * The Lambda handlers bundled as deployed (lib/lambda-bundling.ts), with esbuild in memory: what a
 * cold start reads, and externals reached only through dynamic import(). No synthesis: the assets
 * `cdk synth` writes are tested in lambda-assets.test.ts.
 */
import assert from 'node:assert/strict';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadedAtStart } from '../../bench/bundle-sizes.ts';
import { MODULES, type ResourceModule } from '../../functions/platform/routes.ts';
import { PROJECT_ROOT } from '../../lib/constructs/platform-function.ts';
import { cachedBuildSync } from '../../lib/esbuild-cache.ts';
import { esbuildBuildOptions } from '../../lib/lambda-bundling.ts';
import { MODULE_ACCESS } from '../../lib/module-access.ts';

describe('bundles', () => {
  /** A handler bundled as deployed, in memory, with its metafile. */
  // Each handler is built once for the whole file (several tests read the same build).
  const builds = new Map<ResourceModule, ReturnType<typeof buildOnce>>();
  const buildHandler = (module: ResourceModule) => {
    const built = builds.get(module) ?? buildOnce(module);
    builds.set(module, built);
    return built;
  };
  // Through the construct's cache (lib/esbuild-cache.ts): the build a synthesis deploys.
  const buildOnce = async (module: ResourceModule) =>
    cachedBuildSync({
      ...esbuildBuildOptions(
        MODULE_ACCESS[module],
        join(PROJECT_ROOT, 'functions/http', `${module}.ts`),
        'out',
      ),
      logLevel: 'silent',
      absWorkingDir: PROJECT_ROOT,
    });

  test('externals are reached only through dynamic import() (a static one would fail at load)', async () => {
    for (const module of MODULES) {
      const result = await buildHandler(module);
      const loaded = loadedAtStart(result.metafile);
      assert.ok(loaded.length > 0, module);
      const staticExternals = loaded.flatMap((o) =>
        o.imports.filter((i) => i.external && !isBuiltin(i.path) && i.kind !== 'dynamic-import'),
      );
      assert.deepEqual(staticExternals, [], module);
    }
  });

  /** The handler's bundle (as deployed) and, per npm package (or "functions/"), the bytes its cold start reads. */
  const lambdaBundleOf = async (module: ResourceModule) => {
    const result = await buildHandler(module);
    const atStart = new Map<string, number>();
    for (const output of loadedAtStart(result.metafile)) {
      for (const [file, input] of Object.entries(output.inputs)) {
        const name = packageOf(file);
        atStart.set(name, (atStart.get(name) ?? 0) + input.bytesInOutput);
      }
    }
    return { metafile: result.metafile, atStart };
  };
  const packageOf = (file: string) => {
    const at = file.lastIndexOf('node_modules/');
    if (at < 0) return 'functions/';
    const [scope, name] = file.slice(at + 'node_modules/'.length).split('/');
    return scope?.startsWith('@') ? `${scope}/${name}` : (scope ?? file);
  };
  const PROVIDERS = ['@ai-sdk/openai', '@ai-sdk/anthropic', '@ai-sdk/google', 'ollama-ai-provider-v2'];

  test('a call route’s cold start reads no model SDK, no sandbox client, no schema engine and no more zod than tasks', async () => {
    const tasks = await lambdaBundleOf('tasks');
    for (const module of ['calls', 'schedule-runs', 'mcp'] as const) {
      const { atStart } = await lambdaBundleOf(module);
      const loaded = [...atStart.keys()];
      for (const lazy of [
        'ai',
        ...PROVIDERS,
        '@ai-sdk/provider-utils',
        '@aws-sdk/client-ecs',
        '@aws-sdk/client-s3',
        'ajv',
        're2js',
        '@modelcontextprotocol/sdk',
      ]) {
        assert.ok(!loaded.includes(lazy), `${module}: ${lazy} is read at cold start`);
      }
      // The AI SDK's zod is kept apart (lib/lambda-bundling.ts, AI_SDK_ZOD_ALIAS); shared, it put
      // 447 KB of zod in the calls cold start against 97 KB in tasks'.
      const zod = atStart.get('zod') ?? 0;
      const tasksZod = tasks.atStart.get('zod') ?? 0;
      assert.ok(zod <= tasksZod * 1.25, `${module}: ${zod} bytes of zod at start, tasks ${tasksZod}`);
    }
  });

  test('only the mcp Lambda carries the MCP SDK', async () => {
    for (const module of MODULES) {
      const { metafile } = await lambdaBundleOf(module);
      const carries = Object.values(metafile.outputs).some((o) =>
        Object.keys(o.inputs).some((f) => packageOf(f) === '@modelcontextprotocol/sdk'),
      );
      assert.equal(carries, module === 'mcp', module);
    }
  });

  test('the LLM gateway loads no provider package: a call imports its own provider’s alone', async () => {
    const { metafile } = await lambdaBundleOf('calls');
    const outputs = metafile.outputs;
    const gateway = Object.keys(outputs).find((path) =>
      outputs[path]?.entryPoint?.endsWith('functions/adapters/llm/ai-sdk-gateway.ts'),
    );
    assert.ok(gateway, 'the gateway is a chunk of its own (a dynamic import)');
    // What loading the gateway's chunk reads: it and the chunks it imports statically.
    const seen = new Set<string>();
    const visit = (path: string) => {
      if (seen.has(path)) return;
      seen.add(path);
      for (const i of outputs[path]?.imports ?? []) if (i.kind === 'import-statement') visit(i.path);
    };
    visit(gateway);
    const read = new Set(
      [...seen].flatMap((path) => Object.keys(outputs[path]?.inputs ?? {}).map(packageOf)),
    );
    assert.ok(read.has('ai'), 'the gateway chunk carries the AI SDK core');
    for (const provider of PROVIDERS) {
      assert.ok(!read.has(provider), `${provider} loads with the gateway`);
      const bundled = Object.values(outputs).some((o) =>
        Object.keys(o.inputs).some((f) => packageOf(f) === provider),
      );
      assert.ok(bundled, `${provider} is in the asset`);
    }
  });
});
