import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startKeyAddingProxy } from '../helpers/key-adding-proxy.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, a devDependency) against
 * POST /mcp of the local platform: every server scenario of its active suite runs, and the ones a
 * server whose tools are its users' agents cannot pass are its expected failures, each with the
 * reason (docs/mcp.md lists them). A scenario outside that list that fails fails this test, and so
 * does one in it that passes (the suite calls the baseline stale). The suite takes no header
 * option, so it reaches the platform through a loopback proxy that adds the key and passes every
 * other header (Host and Origin too) as the suite sent it.
 */

const SUITE = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url),
);

/** Scenarios that do not apply to a tools-only server of agents, and why. */
const NOT_APPLICABLE: Record<string, string> = {
  'logging-set-level': 'no logging capability: the server sends no log messages',
  'completion-complete': 'no prompts or resource templates, so nothing to complete',
  'tools-call-simple-text':
    'calls the suite’s own test tool (test_simple_text); tools here are agents, org__agent',
  'tools-call-image': 'calls the suite’s own test tool (test_image_content)',
  'tools-call-audio': 'calls the suite’s own test tool (test_audio_content)',
  'tools-call-embedded-resource': 'calls the suite’s own test tool (test_embedded_resource)',
  'tools-call-mixed-content': 'calls the suite’s own test tool (test_multiple_content_types)',
  'tools-call-with-logging': 'calls the suite’s own test tool (test_tool_with_logging)',
  'tools-call-error': 'calls the suite’s own test tool (test_error_handling)',
  'tools-call-with-progress': 'calls the suite’s own test tool (test_tool_with_progress)',
  'tools-call-sampling': 'calls the suite’s own test tool (test_sampling); the server sends no requests',
  'tools-call-elicitation':
    'calls the suite’s own test tool (test_elicitation); the server sends no requests',
  'json-schema-2020-12': 'looks for the suite’s own test tool (json_schema_2020_12_tool)',
  'elicitation-sep1034-defaults': 'calls the suite’s own test tool; the server sends no requests',
  'elicitation-sep1330-enums': 'calls the suite’s own test tool; the server sends no requests',
  'server-sse-polling': 'needs SSE streams and a session: the server is stateless and answers JSON',
  'server-sse-multiple-streams': 'needs SSE streams and a session: the server is stateless and answers JSON',
  'resources-list': 'no resources capability',
  'resources-read-text': 'no resources capability',
  'resources-read-binary': 'no resources capability',
  'resources-templates-read': 'no resources capability',
  'resources-subscribe': 'no resources capability',
  'resources-unsubscribe': 'no resources capability',
  'prompts-list': 'no prompts capability',
  'prompts-get-simple': 'no prompts capability',
  'prompts-get-with-args': 'no prompts capability',
  'prompts-get-embedded-resource': 'no prompts capability',
  'prompts-get-with-image': 'no prompts capability',
};

const run = promisify(execFile);

describe('the official MCP conformance suite against POST /mcp', () => {
  let p: TestPlatform;
  let proxy: { url: string; close: () => Promise<void> };
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-mcp-conformance-'));
    p = await startTestPlatform({ OPENAI_API_KEY: 'sk-openai-test' });
    const published = await p.request('POST', '/agents', {
      body: {
        name: 'summarise',
        description: 'Summarises text.',
        supported_providers: ['openai'],
        default_models: { openai: 'gpt-test-mini' },
        prompt_template: 'Summarise: {{text}}',
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
    });
    assert.equal(published.status, 201, published.text);
    proxy = await startKeyAddingProxy(p.url, p.ownerKey);
  });
  after(async () => {
    await proxy?.close();
    await p?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('passes every server scenario a tools-only server can, DNS-rebinding protection among them', async () => {
    assert.ok(existsSync(SUITE), `${SUITE} is missing: npm install (it is a devDependency)`);
    const baseline = join(dir, 'expected-failures.yml');
    await writeFile(
      baseline,
      `server:\n${Object.keys(NOT_APPLICABLE)
        .map((s) => `  - ${s}\n`)
        .join('')}`,
    );
    const results = join(dir, 'results');
    const outcome = await run(
      process.execPath,
      [
        SUITE,
        'server',
        '--url',
        `${proxy.url}/mcp`,
        '--suite',
        'all',
        '--expected-failures',
        baseline,
        '-o',
        results,
      ],
      { timeout: 100_000, maxBuffer: 16 * 1024 * 1024 },
    ).catch((err: { code?: number; stdout?: string; stderr?: string }) => err);
    const output = `${outcome.stdout ?? ''}\n${outcome.stderr ?? ''}`;
    assert.ok(!('code' in outcome) || outcome.code === undefined, output);

    // What passed, from the suite's own record of each scenario's checks.
    const passed = new Set<string>();
    for (const entry of await readdir(results)) {
      const checks = JSON.parse(await readFile(join(results, entry, 'checks.json'), 'utf8')) as {
        status: string;
      }[];
      const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
      if (checks.length > 0 && checks.every((c) => c.status !== 'FAILURE')) passed.add(scenario);
    }
    for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']) {
      assert.ok(passed.has(scenario), `${scenario} passed\n${output}`);
    }
  });
});
