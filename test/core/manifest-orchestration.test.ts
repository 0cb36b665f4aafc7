/**
 * The agent manifest (as manifest.test.ts): a managed loop's custom tools, and the orchestration
 * section (dependencies, hops, time limits, modes, and the tools that call each dependency).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  agent,
  assertIssue,
  type Input,
  issuesOf,
  ok,
  orchestrator,
  tool,
  withManifest,
} from '../helpers/manifests.ts';

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
