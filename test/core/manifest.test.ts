import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { type Manifest, parseManifest, prefixIssues } from '../../functions/core/agents/manifest.ts';
import { placeholders } from '../../functions/core/agents/placeholders.ts';
import { isPaid } from '../../functions/core/agents/pricing.ts';
import {
  DEFAULT_MODELS,
  LLM_PROVIDERS,
  LOCAL_PROVIDER,
  PROVIDERS,
} from '../../functions/core/agents/providers.ts';
import { compileInputValidator } from '../../functions/core/agents/user-schema.ts';
import type { FieldIssue } from '../../functions/shared/errors.ts';

type Input = Record<string, unknown>;
type Options = { allowNoSecrets?: boolean };

const prompt: Input = {
  name: 'summarize',
  description: 'Summarises text',
  supported_providers: ['anthropic'],
};
const tool: Input = {
  name: 'scraper',
  type: 'tool',
  description: 'Scrapes a page',
  supported_providers: ['any'],
  required_secrets: ['SCRAPER_TOKEN'],
  runtime: { command: 'python main.py' },
};
const agent: Input = {
  name: 'researcher',
  type: 'agent',
  description: 'Researches a topic',
  supported_providers: ['anthropic'],
  required_secrets: ['ANTHROPIC_API_KEY'],
};
const orchestrator: Input = {
  ...agent,
  name: 'orchestrator',
  custom_tools: [
    {
      name: 'summarize',
      description: 'Summarise with acme/summarize',
      command: 'agenthost call acme/summarize/v3 --text {{text}}',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
  ],
  manifest: {
    manifest_version: 1,
    dependencies: [{ id: 'acme/summarize', version: 'v3' }],
    max_hops: 2,
    timeout_ms: 120_000,
  },
};

function ok(input: unknown, options?: Options): Manifest {
  const r = parseManifest(input, options);
  assert.ok(r.ok, `expected ok, got ${JSON.stringify(!r.ok && r.issues)}`);
  return r.manifest;
}

function issuesOf(input: unknown, options?: Options): FieldIssue[] {
  const r = parseManifest(input, options);
  assert.equal(r.ok, false, 'expected issues');
  return r.ok ? [] : r.issues;
}

function assertIssue(input: unknown, field: string, fragment: string, options?: Options) {
  const issues = issuesOf(input, options);
  assert.ok(
    issues.some((i) => i.field === field && i.message.includes(fragment)),
    `expected ${field}: "${fragment}" in ${JSON.stringify(issues)}`,
  );
}

const withManifest = (over: Input): Input => ({
  ...orchestrator,
  manifest: { ...(orchestrator.manifest as Input), ...over },
});

describe('manifest: normalisation', () => {
  it('fills every default of a minimal prompt agent', () => {
    assert.deepEqual(ok(prompt), {
      name: 'summarize',
      type: 'prompt',
      description: 'Summarises text',
      supported_providers: ['anthropic'],
      execution_engine: 'direct_llm',
      run_mode: 'on_demand',
      callable: true,
      default_endpoint: 'run',
      timeout_seconds: 300,
      tags: [],
      is_public: false,
      default_models: {},
      default_skills: [],
      skills_locked: false,
      required_secrets: [],
      optional_secrets: [],
      custom_tools: [],
      allow_local_download: false,
      price_credits: 0,
    });
  });

  it('maps legacy types: code -> tool, agentic -> agent', () => {
    const code = ok({ ...tool, type: 'code' });
    assert.equal(code.type, 'tool');
    assert.equal(code.execution_engine, 'code_runtime');
    const agentic = ok({ ...agent, type: 'agentic' });
    assert.equal(agentic.type, 'agent');
    assert.equal(agentic.execution_engine, 'managed_loop');
  });

  it('refuses an unknown type', () => {
    assertIssue({ ...prompt, type: 'chain' }, 'type', 'must be prompt, tool, agent or skill');
  });

  it('derives the engine from the type; managed-loop agents get the default loop', () => {
    const t = ok({ ...tool, runtime: undefined });
    assert.equal(t.execution_engine, 'code_runtime');
    assert.equal(t.runtime, undefined);
    const a = ok(agent);
    assert.equal(a.execution_engine, 'managed_loop');
    assert.deepEqual(a.loop, { max_turns: 25 });
  });

  it('a runtime object forces code_runtime and a loop object forces managed_loop', () => {
    const promptWithRuntime = ok({ ...prompt, runtime: { command: 'node index.js' } });
    assert.equal(promptWithRuntime.execution_engine, 'code_runtime');
    assert.deepEqual(promptWithRuntime.runtime, { command: 'node index.js' });
    const promptWithLoop = ok({ ...prompt, loop: { max_turns: 10 } });
    assert.equal(promptWithLoop.execution_engine, 'managed_loop');
    assert.deepEqual(promptWithLoop.loop, { max_turns: 10 });
    const agentWithRuntime = ok({ ...agent, runtime: { command: 'node loop.js' } });
    assert.equal(agentWithRuntime.execution_engine, 'code_runtime');
    assert.equal(agentWithRuntime.loop, undefined);
  });

  it('skills have engine none and are not callable', () => {
    const s = ok({ name: 'tone', type: 'skill', description: 'Tone guide', supported_providers: ['any'] });
    assert.equal(s.execution_engine, 'none');
    assert.equal(s.callable, false);
  });

  it('accepts execution_engine equal to the derived one and refuses another', () => {
    assert.equal(ok({ ...agent, execution_engine: 'managed_loop' }).execution_engine, 'managed_loop');
    assertIssue({ ...agent, execution_engine: 'direct_llm' }, 'execution_engine', 'is derived');
  });

  it('a normalised manifest parses back to itself', () => {
    const skill = { name: 'tone', type: 'skill', description: 'Tone', supported_providers: ['any'] };
    for (const input of [prompt, tool, agent, orchestrator, skill, { ...tool, run_mode: 'always_on' }]) {
      const once = ok(input);
      assert.deepEqual(ok(structuredClone(once)), once);
    }
  });

  it('always-on agents get timeout 0; tags are de-duplicated', () => {
    const m = ok({ ...tool, run_mode: 'always_on', tags: ['web', 'web', 'scraping'] });
    assert.equal(m.run_mode, 'always_on');
    assert.equal(m.timeout_seconds, 0);
    assert.deepEqual(m.tags, ['web', 'scraping']);
  });

  it('callable, default_endpoint and is_public keep given values', () => {
    const m = ok({ ...prompt, callable: false, default_endpoint: 'summarize_v2', is_public: true });
    assert.equal(m.callable, false);
    assert.equal(m.default_endpoint, 'summarize_v2');
    assert.equal(m.is_public, true);
    assertIssue({ ...prompt, default_endpoint: 'Run Now' }, 'default_endpoint', 'lowercase');
    assertIssue({ ...prompt, callable: 'yes' }, 'callable', 'must be true or false');
  });
});

describe('manifest: warnings and unknown fields', () => {
  it('ignores the singular model field with a DEPRECATED_FIELD warning', () => {
    const r = parseManifest({ ...prompt, model: 'claude-x' });
    assert.ok(r.ok);
    assert.deepEqual(r.warnings, [
      { code: 'DEPRECATED_FIELD', field: 'model', message: 'ignored; use default_models' },
    ]);
    assert.equal('model' in r.manifest, false);
    const plain = parseManifest(prompt);
    assert.ok(plain.ok);
    assert.deepEqual(plain.warnings, []);
  });

  it('refuses unknown top-level fields, with a hint for version', () => {
    assertIssue({ ...prompt, colour: 'red' }, 'colour', 'is not a manifest field');
    assertIssue({ ...prompt, version: 'v2' }, 'version', 'versions are assigned on publish');
    assertIssue(
      { ...prompt, runtime: { command: 'x', shell: 'zsh' } },
      'runtime.shell',
      'is not a field of runtime',
    );
  });

  it('refuses a manifest that is not an object', () => {
    for (const input of ['x', null, [], 3]) {
      assert.deepEqual(issuesOf(input), [{ field: '', message: 'must be a JSON object' }]);
    }
  });

  it('reports every issue at once', () => {
    const issues = issuesOf({
      name: 'Bad Name',
      type: 'agent',
      description: '',
      supported_providers: ['openai'],
      runtime: { command: 'x' },
      loop: { max_turns: 99 },
      required_secrets: ['PLATFORM_SERVICE_KEY'],
      input_schema: { type: 'strin' },
      extra: true,
    });
    const fields = new Set(issues.map((i) => i.field));
    for (const f of [
      'name',
      'description',
      'supported_providers.0',
      'runtime',
      'loop.max_turns',
      'required_secrets.0',
      'input_schema',
      'extra',
    ]) {
      assert.ok(fields.has(f), `missing ${f} in ${JSON.stringify(issues)}`);
    }
  });

  it('prefixIssues places manifest fields under a source', () => {
    assert.deepEqual(
      prefixIssues('body.manifest', [
        { field: 'name', message: 'm' },
        { field: '', message: 'root' },
      ]),
      [
        { field: 'body.manifest.name', message: 'm' },
        { field: 'body.manifest', message: 'root' },
      ],
    );
  });
});

describe('manifest: required fields', () => {
  it('name: lowercase letters, digits and hyphens, 1-64, starting with a letter or digit', () => {
    for (const name of ['a', '9lives', 'my-agent-2', 'x'.repeat(64)])
      assert.equal(ok({ ...prompt, name }).name, name);
    for (const name of ['', 'My-agent', '-agent', 'my_agent', 'my agent', 'x'.repeat(65), 7]) {
      assertIssue({ ...prompt, name }, 'name', typeof name === 'number' ? 'must be a string' : 'lowercase');
    }
    assertIssue({ description: 'd', supported_providers: ['any'] }, 'name', 'is required');
  });

  it('description is a required non-empty string', () => {
    assertIssue({ ...prompt, description: undefined }, 'description', 'is required');
    assertIssue({ ...prompt, description: '   ' }, 'description', 'must not be empty');
  });

  it('supported_providers: required, non-empty, the three providers or any', () => {
    assert.deepEqual(
      ok({ ...prompt, supported_providers: ['anthropic', 'openai', 'google'] }).supported_providers,
      ['anthropic', 'openai', 'google'],
    );
    assert.deepEqual(ok({ ...prompt, supported_providers: ['any'] }).supported_providers, ['any']);
    assertIssue({ ...prompt, supported_providers: undefined }, 'supported_providers', 'is required');
    assertIssue({ ...prompt, supported_providers: [] }, 'supported_providers', 'at least one');
    assertIssue(
      { ...prompt, supported_providers: ['mistral'] },
      'supported_providers.0',
      'anthropic, openai, google or any',
    );
    assertIssue(
      { ...prompt, supported_providers: ['ollama'] },
      'supported_providers.0',
      'local-model provider',
    );
    assertIssue(
      { ...prompt, supported_providers: ['openai', 'openai'] },
      'supported_providers.1',
      'listed twice',
    );
    assertIssue({ ...prompt, supported_providers: ['any', 'openai'] }, 'supported_providers', 'only value');
  });

  it('agent types (and loop-forced agents) may list only anthropic', () => {
    assertIssue(
      { ...agent, supported_providers: ['anthropic', 'openai'] },
      'supported_providers.1',
      'only anthropic',
    );
    assertIssue({ ...agent, supported_providers: ['any'] }, 'supported_providers.0', 'only anthropic');
    assertIssue(
      { ...prompt, supported_providers: ['google'], loop: {} },
      'supported_providers.0',
      'only anthropic',
    );
    ok({ ...tool, supported_providers: ['openai'] });
  });
});

describe('manifest: behaviour fields', () => {
  it('runtime and loop are mutually exclusive', () => {
    assertIssue(
      { ...agent, runtime: { command: 'x' }, loop: { max_turns: 5 } },
      'runtime',
      'mutually exclusive',
    );
  });

  it('runtime.command is a required non-empty string', () => {
    assertIssue({ ...tool, runtime: {} }, 'runtime.command', 'is required');
    assertIssue({ ...tool, runtime: { command: ' ' } }, 'runtime.command', 'must not be empty');
    assertIssue({ ...tool, runtime: { command: ['python'] } }, 'runtime.command', 'must be a string');
    assertIssue({ ...tool, runtime: 'python main.py' }, 'runtime', 'must be an object');
  });

  it('loop.max_turns is an integer from 1 to 50, default 25', () => {
    assert.deepEqual(ok({ ...agent, loop: {} }).loop, { max_turns: 25 });
    assert.deepEqual(ok({ ...agent, loop: { max_turns: 50 } }).loop, { max_turns: 50 });
    assertIssue(
      { ...agent, loop: { max_turns: 51 } },
      'loop.max_turns',
      'must be at most 50 (platform maximum)',
    );
    assertIssue({ ...agent, loop: { max_turns: 0 } }, 'loop.max_turns', 'must be at least 1');
    assertIssue({ ...agent, loop: { max_turns: 2.5 } }, 'loop.max_turns', 'integer');
  });

  it('always_on requires runtime.command or loop, not direct_llm', () => {
    assertIssue(
      { ...prompt, run_mode: 'always_on' },
      'run_mode',
      'always_on requires runtime.command or loop',
    );
    assertIssue(
      { ...tool, runtime: undefined, run_mode: 'always_on' },
      'run_mode',
      'requires runtime.command',
    );
    assert.equal(ok({ ...tool, run_mode: 'always_on' }).run_mode, 'always_on');
    assert.equal(ok({ ...agent, run_mode: 'always_on' }).timeout_seconds, 0);
    assert.equal(ok({ ...prompt, loop: {}, run_mode: 'always_on' }).execution_engine, 'managed_loop');
    assertIssue({ ...prompt, run_mode: 'sometimes' }, 'run_mode', 'on_demand or always_on');
  });

  it('timeout_seconds: 1-300 on demand, 0 always-on', () => {
    assert.equal(ok({ ...prompt, timeout_seconds: 120 }).timeout_seconds, 120);
    assertIssue({ ...prompt, timeout_seconds: 301 }, 'timeout_seconds', 'at most 300 (platform maximum)');
    assertIssue({ ...prompt, timeout_seconds: 0 }, 'timeout_seconds', '0 is for always-on');
    assertIssue({ ...prompt, timeout_seconds: -1 }, 'timeout_seconds', 'at least 0');
    assertIssue({ ...prompt, timeout_seconds: 1.5 }, 'timeout_seconds', 'integer');
    assertIssue({ ...tool, run_mode: 'always_on', timeout_seconds: 60 }, 'timeout_seconds', 'must be 0');
    assert.equal(ok({ ...tool, run_mode: 'always_on', timeout_seconds: 0 }).timeout_seconds, 0);
  });

  it('skills cannot run', () => {
    const skill = { name: 'tone', type: 'skill', description: 'Tone', supported_providers: ['any'] };
    assertIssue({ ...skill, runtime: { command: 'x' } }, 'runtime', 'not allowed for skills');
    assertIssue({ ...skill, loop: {} }, 'loop', 'not allowed for skills');
    assertIssue({ ...skill, run_mode: 'always_on' }, 'run_mode', 'not allowed for skills');
    assertIssue({ ...skill, callable: true }, 'callable', 'must be false for skills');
  });
});

describe('manifest: secrets', () => {
  it('tool and agent types must declare required_secrets unless bypassed', () => {
    assertIssue({ ...tool, required_secrets: undefined }, 'required_secrets', 'must be declared');
    assertIssue({ ...agent, required_secrets: [] }, 'required_secrets', 'must be declared');
    assertIssue({ ...tool, type: 'code', required_secrets: [] }, 'required_secrets', 'must be declared');
    assert.deepEqual(ok({ ...tool, required_secrets: [] }, { allowNoSecrets: true }).required_secrets, []);
    ok({ ...agent, required_secrets: undefined }, { allowNoSecrets: true });
  });

  it('prompt and skill types are exempt', () => {
    ok(prompt);
    ok({ name: 'tone', type: 'skill', description: 'Tone', supported_providers: ['any'] });
  });

  it('refuses PLATFORM_SERVICE_KEY with the reason', () => {
    assertIssue(
      { ...tool, required_secrets: ['PLATFORM_SERVICE_KEY'] },
      'required_secrets.0',
      'injected automatically for agents with dependencies',
    );
    assertIssue(
      { ...tool, optional_secrets: ['PLATFORM_SERVICE_KEY'] },
      'optional_secrets.0',
      'breaks orchestration',
    );
  });

  it('secret names are env-var names; duplicates and overlaps refused', () => {
    const m = ok({ ...tool, required_secrets: ['API_KEY', '_X1'], optional_secrets: ['EXTRA'] });
    assert.deepEqual(m.required_secrets, ['API_KEY', '_X1']);
    assert.deepEqual(m.optional_secrets, ['EXTRA']);
    for (const bad of ['api_key', '1KEY', 'MY-KEY', '']) {
      assertIssue(
        { ...tool, required_secrets: [bad] },
        'required_secrets.0',
        bad === '' ? 'empty' : 'environment variable',
      );
    }
    assertIssue({ ...tool, required_secrets: ['A', 'A'] }, 'required_secrets.1', 'listed twice');
    assertIssue(
      { ...tool, required_secrets: ['A'], optional_secrets: ['A'] },
      'optional_secrets.0',
      'already in required',
    );
  });
});

describe('manifest: custom tools', () => {
  const loopAgent = (tools: unknown[]): Input => ({ ...agent, custom_tools: tools });
  const search = {
    name: 'search',
    description: 'Web search',
    command: 'search --q {{query}} --n {{ limit }}',
    input_schema: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' } } },
  };

  it('accepts tools and keeps them', () => {
    assert.deepEqual(
      ok(loopAgent([search, { name: 'now', description: 'Time', command: 'date' }])).custom_tools,
      [search, { name: 'now', description: 'Time', command: 'date' }],
    );
  });

  it('name, description and command are required', () => {
    const issues = issuesOf(loopAgent([{}]));
    for (const f of ['custom_tools.0.name', 'custom_tools.0.description', 'custom_tools.0.command']) {
      assert.ok(
        issues.some((i) => i.field === f && i.message === 'is required'),
        f,
      );
    }
    assertIssue(loopAgent([{ ...search, name: 'web search' }]), 'custom_tools.0.name', 'letters, digits');
    assertIssue(
      loopAgent([{ ...search, timeout: 5 }]),
      'custom_tools.0.timeout',
      'is not a field of custom_tools.0',
    );
  });

  it('input_schema is required when the command has placeholders', () => {
    assertIssue(
      loopAgent([{ ...search, input_schema: undefined }]),
      'custom_tools.0.input_schema',
      '{{query}}, {{limit}}',
    );
  });

  it('every placeholder must be a property of input_schema', () => {
    assertIssue(
      loopAgent([{ ...search, command: 'search {{query}} {{page}}' }]),
      'custom_tools.0.command',
      '{{page}} is not a property',
    );
  });

  it('built-in tool names cannot be reused', () => {
    for (const name of ['bash', 'read_file', 'write_file', 'list_files', 'submit_result']) {
      assertIssue(loopAgent([{ ...search, name }]), 'custom_tools.0.name', 'built-in tool');
    }
  });

  it('duplicate names are refused', () => {
    assertIssue(loopAgent([search, search]), 'custom_tools.1.name', 'duplicates custom_tools.0.name');
  });

  it('are refused on agents that do not run the managed loop', () => {
    assertIssue({ ...tool, custom_tools: [search] }, 'custom_tools', 'managed-loop');
  });

  it('input_schema must be a valid JSON Schema', () => {
    assertIssue(
      loopAgent([{ ...search, input_schema: { type: 'object', properties: { query: { type: 'text' } } } }]),
      'custom_tools.0.input_schema',
      'is not a valid JSON Schema: /properties/query/type',
    );
  });
});

describe('manifest: orchestration section', () => {
  it('accepts a valid orchestrator and fills its defaults', () => {
    const m = ok(orchestrator);
    assert.deepEqual(m.manifest, {
      manifest_version: 1,
      dependencies: [{ id: 'acme/summarize', version: 'v3' }],
      max_hops: 2,
      timeout_ms: 120_000,
      per_call_downstream_cap: 50,
      orchestration_mode: 'strict',
    });
  });

  it('manifest_version must be 1', () => {
    assertIssue(withManifest({ manifest_version: 2 }), 'manifest.manifest_version', 'must be 1');
    assertIssue(withManifest({ manifest_version: undefined }), 'manifest.manifest_version', 'must be 1');
  });

  it('dependencies are {id: org/agent, version: exact pin}', () => {
    for (const version of ['^v1', 'latest', '*', 'v1.x', '~v2', '3', 'v0', 'v1.2']) {
      assertIssue(
        withManifest({ dependencies: [{ id: 'acme/summarize', version }] }),
        'manifest.dependencies.0.version',
        'exact version pin',
      );
    }
    for (const id of ['summarize', 'Acme/summarize', 'acme/summarize/v3', 'a/b']) {
      assertIssue(
        withManifest({ dependencies: [{ id, version: 'v1' }] }),
        'manifest.dependencies.0.id',
        'org_slug/agent_name',
      );
    }
    assertIssue(
      withManifest({ dependencies: [{ id: 'acme/summarize' }] }),
      'manifest.dependencies.0.version',
      'is required',
    );
    assertIssue(withManifest({ dependencies: undefined }), 'manifest.dependencies', 'is required');
  });

  it('reports the second dependency by index', () => {
    assertIssue(
      withManifest({
        dependencies: [
          { id: 'acme/summarize', version: 'v3' },
          { id: 'acme/translate', version: 'latest' },
        ],
      }),
      'manifest.dependencies.1.version',
      'ranges such as ^v1',
    );
  });

  it('duplicate dependencies are refused', () => {
    assertIssue(
      withManifest({
        dependencies: [
          { id: 'acme/summarize', version: 'v3' },
          { id: 'acme/summarize', version: 'v2' },
        ],
      }),
      'manifest.dependencies.1.id',
      'duplicates manifest.dependencies.0.id',
    );
  });

  it('max_hops is a required integer, at least 1 with dependencies', () => {
    assertIssue(withManifest({ max_hops: 0 }), 'manifest.max_hops', 'at least 1 when dependencies');
    assertIssue(withManifest({ max_hops: undefined }), 'manifest.max_hops', 'is required');
    assertIssue(withManifest({ max_hops: 1.5 }), 'manifest.max_hops', 'integer');
    assertIssue(withManifest({ max_hops: 11 }), 'manifest.max_hops', 'at most 10');
    assert.equal(ok(withManifest({ dependencies: [], max_hops: 0 })).manifest?.max_hops, 0);
  });

  it('timeout_ms is a required positive integer up to 300 s', () => {
    assertIssue(withManifest({ timeout_ms: undefined }), 'manifest.timeout_ms', 'is required');
    assertIssue(withManifest({ timeout_ms: 0 }), 'manifest.timeout_ms', 'positive');
    assertIssue(withManifest({ timeout_ms: 300_001 }), 'manifest.timeout_ms', 'at most 300000');
  });

  it('per_call_downstream_cap defaults to 50 and must be positive', () => {
    assert.equal(ok(withManifest({ per_call_downstream_cap: 10 })).manifest?.per_call_downstream_cap, 10);
    assertIssue(
      withManifest({ per_call_downstream_cap: 0 }),
      'manifest.per_call_downstream_cap',
      'at least 1',
    );
  });

  it('orchestration_mode: strict or flexible, strict by default only with dependencies', () => {
    assert.equal(
      ok(withManifest({ orchestration_mode: 'flexible' })).manifest?.orchestration_mode,
      'flexible',
    );
    assert.equal(ok(withManifest({ dependencies: [] })).manifest?.orchestration_mode, undefined);
    assertIssue(
      withManifest({ orchestration_mode: 'loose' }),
      'manifest.orchestration_mode',
      'strict or flexible',
    );
  });

  it('optional fields: min_required_hops, region, visibility, recommended_min_caller_budget', () => {
    const m = ok(
      withManifest({
        min_required_hops: 1,
        region: 'eu-west-1',
        visibility: 'public',
        recommended_min_caller_budget: 100,
      }),
    );
    assert.equal(m.manifest?.min_required_hops, 1);
    assert.equal(m.manifest?.region, 'eu-west-1');
    assert.equal(m.is_public, true, 'visibility public makes the agent public');
    assert.equal(m.manifest?.recommended_min_caller_budget, 100);
    assertIssue(
      withManifest({ min_required_hops: 3 }),
      'manifest.min_required_hops',
      'must not exceed max_hops',
    );
    assertIssue(withManifest({ region: 'EU West' }), 'manifest.region', 'lowercase');
    assertIssue(withManifest({ visibility: 'internal' }), 'manifest.visibility', 'public or private');
    assertIssue(
      { ...withManifest({ visibility: 'private' }), is_public: true },
      'manifest.visibility',
      'contradicts is_public',
    );
    assertIssue(
      withManifest({ recommended_min_caller_budget: -1 }),
      'manifest.recommended_min_caller_budget',
      'at least 0',
    );
    assertIssue(withManifest({ fanout: 3 }), 'manifest.fanout', 'is not a field of manifest');
  });

  it('only managed-loop agents may declare dependencies', () => {
    assertIssue(
      { ...orchestrator, type: 'tool', custom_tools: [], runtime: { command: 'x' } },
      'manifest.dependencies',
      'only managed-loop agents',
    );
    assertIssue(
      { ...orchestrator, type: 'prompt', custom_tools: [] },
      'manifest.dependencies',
      'only managed-loop',
    );
    ok({ ...orchestrator, type: 'prompt', supported_providers: ['anthropic'], loop: { max_turns: 10 } });
  });

  it('every dependency needs a matching custom tool, calling the pinned version', () => {
    assertIssue({ ...orchestrator, custom_tools: [] }, 'manifest.dependencies.0', 'no matching custom tool');
    const other = { name: 'x', description: 'x', command: 'agenthost call acme/summarize-pro/v3' };
    assertIssue({ ...orchestrator, custom_tools: [other] }, 'manifest.dependencies.0', 'acme/summarize');
    const stale = { name: 'x', description: 'x', command: 'curl $BASE/acme/summarize/v2/run' };
    assertIssue({ ...orchestrator, custom_tools: [stale] }, 'custom_tools.0.command', 'pins v3');
    ok({ ...orchestrator, custom_tools: [{ ...stale, command: 'curl $BASE/acme/summarize/v3/run' }] });
    ok({ ...orchestrator, custom_tools: [{ ...stale, command: 'call acme/summarize@v3' }] });
  });
});

describe('manifest: JSON Schemas and templates', () => {
  it('input_schema and output_schema must compile', () => {
    assertIssue({ ...prompt, input_schema: { type: 'strin' } }, 'input_schema', 'is not a valid JSON Schema');
    assertIssue({ ...prompt, output_schema: { required: 'a' } }, 'output_schema', '/required must be array');
    assertIssue(
      { ...prompt, input_schema: { requried: ['a'] } },
      'input_schema',
      'unknown keyword: "requried"',
    );
    assertIssue(
      { ...prompt, input_schema: { type: 'string', format: 'telephone' } },
      'input_schema',
      'unknown format "telephone"',
    );
    assertIssue(
      { ...prompt, input_schema: { $ref: '#/$defs/none' } },
      'input_schema',
      "can't resolve reference",
    );
    assertIssue(
      { ...prompt, input_schema: { $schema: 'http://json-schema.org/draft-07/schema#' } },
      'input_schema',
      'draft 2020-12',
    );
    assertIssue({ ...prompt, input_schema: [] }, 'input_schema', 'must be a JSON Schema object');
    assertIssue({ ...prompt, input_schema: true }, 'input_schema', 'must be a JSON Schema object');
    const m = ok({
      ...prompt,
      input_schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { email: { type: 'string', format: 'email', example: 'a@b.c' } },
      },
      output_schema: { type: 'object' },
    });
    assert.deepEqual(m.output_schema, { type: 'object' });
  });

  it('every prompt_template variable must be a property of input_schema', () => {
    const input_schema = { type: 'object', properties: { text: { type: 'string' } } };
    ok({ ...prompt, prompt_template: 'Summarise {{ text }}', input_schema });
    ok({ ...prompt, prompt_template: 'Summarise {{text}} for {{audience}}' });
    assertIssue(
      { ...prompt, prompt_template: 'Summarise {{text}} for {{audience}}', input_schema },
      'prompt_template',
      '{{audience}} is not a property of input_schema',
    );
    ok({
      ...prompt,
      prompt_template: '{{text}} {{audience}}',
      input_schema: { allOf: [input_schema, { properties: { audience: { type: 'string' } } }] },
    });
    assertIssue({ ...prompt, prompt_template: '  ' }, 'prompt_template', 'must not be empty');
    assertIssue({ ...prompt, prompt_template: 5 }, 'prompt_template', 'must be a string');
  });

  it('placeholders() lists distinct {{names}} in order', () => {
    assert.deepEqual(placeholders('a {{x}} b {{ y }} {{x}} {{not valid}} {{_z1}}'), ['x', 'y', '_z1']);
    assert.deepEqual(placeholders('none'), []);
  });

  it('compileInputValidator caches by schema JSON and validates', () => {
    const schema = () => ({
      type: 'object',
      properties: { n: { type: 'integer', minimum: 1 } },
      required: ['n'],
    });
    const v = compileInputValidator(schema());
    assert.equal(compileInputValidator(schema()), v, 'an equal schema returns the same validator');
    assert.notEqual(compileInputValidator({ ...schema(), additionalProperties: false }), v);
    assert.equal(v({ n: 2 }), true);
    assert.equal(v({ n: 0 }), false);
    assert.equal(v({}), false);
    assert.throws(() => compileInputValidator({ type: 'nope' }), /Invalid JSON Schema/);
  });

  it('schemas are compiled in isolation: equal $ids do not clash or leak', () => {
    const a = compileInputValidator({
      $id: 'https://example.test/s',
      $defs: { v: { $id: 'inner', type: 'string' } },
    });
    const b = compileInputValidator({
      $id: 'https://example.test/s',
      $defs: { v: { $id: 'inner', type: 'number' } },
    });
    assert.notEqual(a, b);
    assertIssue(
      { ...prompt, input_schema: { $ref: 'https://example.test/inner' } },
      'input_schema',
      "can't resolve",
    );
  });
});

describe('manifest: tool-type and optional fields', () => {
  it('entrypoint is a relative path inside the bundle', () => {
    assert.equal(ok({ ...tool, entrypoint: 'src/main.py' }).entrypoint, 'src/main.py');
    assertIssue({ ...tool, entrypoint: '/etc/passwd' }, 'entrypoint', 'relative path');
    assertIssue({ ...tool, entrypoint: '../up.py' }, 'entrypoint', 'relative path');
  });

  it('source_url is a git URL without credentials', () => {
    for (const url of [
      'https://github.com/acme/scraper.git',
      'git@github.com:acme/scraper.git',
      'ssh://git@example.com/acme/scraper.git',
    ]) {
      assert.equal(ok({ ...tool, source_url: url }).source_url, url);
    }
    for (const url of ['ftp://example.com/x', 'http://example.com/x.git', 'not a url', 'file:///tmp/x']) {
      assertIssue({ ...tool, source_url: url }, 'source_url', 'must be a git URL');
    }
    assertIssue(
      { ...tool, source_url: 'https://ghp_token@github.com/acme/x.git' },
      'source_url',
      'credentials',
    );
  });

  it('run_command and bundle', () => {
    const m = ok({ ...tool, run_command: 'npm start', bundle: { exclude: ['node_modules/**'] } });
    assert.equal(m.run_command, 'npm start');
    assert.deepEqual(m.bundle, { exclude: ['node_modules/**'], include: [] });
    assertIssue({ ...tool, run_command: '' }, 'run_command', 'must not be empty');
    assertIssue({ ...tool, bundle: { exclude: 'node_modules' } }, 'bundle.exclude', 'must be an array');
    assertIssue({ ...tool, bundle: { include: [3] } }, 'bundle.include.0', 'must be a string');
    assertIssue({ ...tool, bundle: { ignore: [] } }, 'bundle.ignore', 'is not a field of bundle');
  });

  it('default_models maps providers to model ids', () => {
    const m = ok({
      ...prompt,
      supported_providers: ['any'],
      default_models: { openai: 'gpt-x', ollama: 'qwen3' },
    });
    assert.deepEqual(m.default_models, { openai: 'gpt-x', ollama: 'qwen3' });
    assertIssue(
      { ...prompt, default_models: { mistral: 'm' } },
      'default_models.mistral',
      'is not a provider',
    );
    assertIssue(
      { ...prompt, default_models: { openai: 'gpt-x' } },
      'default_models.openai',
      'not in supported_providers',
    );
    assertIssue(
      { ...prompt, default_models: { anthropic: '' } },
      'default_models.anthropic',
      'must not be empty',
    );
  });

  it('default_skills are skill refs; tags are short strings', () => {
    const m = ok({
      ...prompt,
      default_skills: ['acme/tone', 'acme/legal@v2'],
      skills_locked: true,
      tags: ['nlp'],
    });
    assert.deepEqual(m.default_skills, ['acme/tone', 'acme/legal@v2']);
    assert.equal(m.skills_locked, true);
    assertIssue({ ...prompt, default_skills: ['tone'] }, 'default_skills.0', 'org/skill');
    assertIssue({ ...prompt, default_skills: ['acme/tone@latest'] }, 'default_skills.0', 'org/skill');
    assertIssue({ ...prompt, tags: ['x'.repeat(51)] }, 'tags.0', 'at most 50 characters');
  });

  it('allow_local_download and price_credits; paid agents are server-only', () => {
    const free = ok(prompt);
    assert.equal(isPaid(free), false);
    const paid = ok({ ...prompt, price_credits: 5 });
    assert.equal(isPaid(paid), true);
    assert.equal(ok({ ...prompt, allow_local_download: true }).allow_local_download, true);
    assertIssue({ ...prompt, price_credits: -1 }, 'price_credits', 'at least 0');
    assertIssue({ ...prompt, price_credits: 1.5 }, 'price_credits', 'integer');
    assertIssue({ ...prompt, price_credits: 10_001 }, 'price_credits', 'at most 10000');
    assertIssue(
      { ...prompt, price_credits: 5, allow_local_download: true },
      'allow_local_download',
      'server-only',
    );
  });
});

describe('providers', () => {
  it('three supported providers, one local, a default model for each', () => {
    assert.deepEqual([...LLM_PROVIDERS], ['anthropic', 'openai', 'google']);
    assert.equal(LOCAL_PROVIDER, 'ollama');
    assert.deepEqual([...PROVIDERS], [...LLM_PROVIDERS, LOCAL_PROVIDER]);
    for (const p of PROVIDERS) assert.ok(DEFAULT_MODELS[p].length > 0);
  });

  // Model resolution (caller, default_models, PLATFORM_DEFAULT_MODEL_*, built-in) is core/calls/direct-llm.ts,
  // tested end to end in test/api/calls.test.ts ("resolves the model").
});

describe('docs/manifest.md', () => {
  it('every JSON example is a valid manifest', () => {
    const doc = readFileSync(new URL('../../docs/manifest.md', import.meta.url), 'utf8');
    const blocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as Input);
    assert.ok(blocks.length >= 6, 'an example per agent type');
    const types = new Set<string>();
    for (const example of blocks) types.add(ok(example).type);
    assert.deepEqual([...types].sort(), ['agent', 'prompt', 'skill', 'tool']);
  });
});
