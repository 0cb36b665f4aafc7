/**
 * The local platform the CLI's tests run commands against (test/cli/cli-calls.test.ts,
 * cli-agents.test.ts): fake model providers (OpenAI, and Anthropic for call --provider), two Pro
 * accounts, and alpha's public prompt agent alpha/greet published twice (v1, v2) with the CLI.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeAgentDir } from './agent-dir.ts';
import { runCliInProcess } from './cli-in-process.ts';
import { type FakeLlmProviders, start as startFakeLlm } from './fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from './platform.ts';

type Account = { key: string; accountId: string; workspaceId: string };

export interface CliPlatform {
  p: TestPlatform;
  fake: FakeLlmProviders;
  /** A temporary directory for the tests' files (its `none` is an empty config home). */
  home: string;
  alpha: Account;
  bravo: Account;
  /** The environment of a CLI run against the platform with `key`, and no config file. */
  envOf: (key: string) => Record<string, string>;
  /** Stops the platform and the fake providers and removes `home`. */
  close(): Promise<void>;
}

export async function startCliPlatform(): Promise<CliPlatform> {
  const home = await mkdtemp(join(tmpdir(), 'agenthost-cli-'));
  const fake = await startFakeLlm();
  const p = await startTestPlatform({
    OPENAI_API_KEY: 'sk-openai-test',
    OPENAI_BASE_URL: fake.baseUrls.openai,
    // A second provider, for call --provider.
    ANTHROPIC_API_KEY: 'sk-ant-test',
    ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
  });
  const envOf = (key: string) => ({
    AGENTHOST_URL: p.url,
    AGENTHOST_API_KEY: key,
    XDG_CONFIG_HOME: join(home, 'none'),
  });
  const alpha = await p.createAccount('cli-alpha', 'pro');
  const bravo = await p.createAccount('cli-bravo', 'pro');
  const dir = await writeAgentDir(home, {
    name: 'greet',
    description: 'Greets someone.',
    supported_providers: ['openai'],
    default_models: { openai: 'gpt-test-mini' },
    prompt_template: 'Say hello to {{who}}',
    input_schema: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },
    is_public: true,
    allow_local_download: true,
  });
  for (let i = 0; i < 2; i++) {
    const res = await runCliInProcess(['publish', dir], envOf(alpha.key));
    assert.equal(res.code, 0, res.stderr);
  }
  const close = async () => {
    await p.close();
    await fake.close();
    await rm(home, { recursive: true, force: true });
  };
  return { p, fake, home, alpha, bravo, envOf, close };
}
