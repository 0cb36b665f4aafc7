/**
 * The agent manifest (as manifest.test.ts): input and output JSON Schemas and prompt templates,
 * the tool-type and optional fields, the providers, and docs/manifest.md's examples.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { placeholders } from '../../functions/core/agents/placeholders.ts';
import { isPaid } from '../../functions/core/agents/pricing.ts';
import {
  DEFAULT_MODELS,
  LLM_PROVIDERS,
  LOCAL_PROVIDER,
  PROVIDERS,
} from '../../functions/core/agents/providers.ts';
import { compileInputValidator } from '../../functions/core/agents/user-schema.ts';
import { assertIssue, type Input, ok, prompt, tool } from '../helpers/manifests.ts';

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
