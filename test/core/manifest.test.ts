/**
 * The agent manifest (parseManifest, functions/core/agents/manifest.ts): normalisation and defaults,
 * warnings and unknown fields, the required and behaviour fields, secrets. Custom tools and
 * orchestration: manifest-orchestration.test.ts; schemas, templates and the optional fields:
 * manifest-schemas-and-fields.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseManifest, prefixIssues } from '../../functions/core/agents/manifest.ts';
import { agent, assertIssue, issuesOf, ok, orchestrator, prompt, tool } from '../helpers/manifests.ts';

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

  it('run_timeout_seconds: 1-3600, absent unless given, refused for always-on agents', () => {
    const long = ok({ ...prompt, run_timeout_seconds: 3600 });
    assert.equal(long.run_timeout_seconds, 3600);
    // Not the request timeout: that stays within the spec's 300 s.
    assert.equal(long.timeout_seconds, 300);
    assert.equal('run_timeout_seconds' in ok(prompt), false);
    assertIssue(
      { ...prompt, run_timeout_seconds: 3601 },
      'run_timeout_seconds',
      'at most 3600 (platform maximum)',
    );
    assertIssue({ ...prompt, run_timeout_seconds: 0 }, 'run_timeout_seconds', 'at least 1');
    assertIssue({ ...prompt, run_timeout_seconds: 90.5 }, 'run_timeout_seconds', 'integer');
    assertIssue(
      { ...tool, run_mode: 'always_on', run_timeout_seconds: 600 },
      'run_timeout_seconds',
      'not allowed for always-on agents',
    );
    // A normalised manifest parses again.
    assert.deepEqual(ok(long), long);
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
