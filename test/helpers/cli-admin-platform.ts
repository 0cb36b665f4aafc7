/**
 * The local platform the CLI's administration commands run against (test/cli/cli-admin.test.ts,
 * cli-admin-tasks-billing.test.ts): four Pro accounts (carol and dave with an email, for
 * invitations), and `run`, which fails a test whose command printed a secret value.
 */
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { runCliInProcess } from './cli-in-process.ts';
import { type FakeLlmProviders, start as startFakeLlm } from './fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from './platform.ts';

/** Secret values set in this file: no command may ever print one, on stdout or stderr. */
export const SECRET_VALUES = [
  'sk-live-4f9c2e7b-never-print-me',
  'second-value-7a1d0c3e',
  'bravo-secret-93be',
];

export type Account = { key: string; accountId: string; workspaceId: string };

type CliResult = Awaited<ReturnType<typeof runCliInProcess>>;

export interface CliAdminPlatform {
  p: TestPlatform;
  fake: FakeLlmProviders;
  home: string;
  /** alpha owns the team workspace (cli-admin.test.ts makes it); carol is invited to it; bravo is a stranger. */
  alpha: Account;
  bravo: Account;
  carol: Account;
  dave: Account;
  /** Runs the CLI and checks that no secret value reached its output, whatever the command. */
  run: (args: string[], env: Record<string, string>, options?: { input?: string }) => Promise<CliResult>;
  /** The environment of a CLI run against the platform with `key` (and `extra`), no config file. */
  envOf: (key: string, extra?: Record<string, string>) => Record<string, string>;
  /** A failure: the exit code, one line on stderr, nothing on stdout, no stack trace. */
  fails: (args: string[], env: Record<string, string>, code: number, pattern?: RegExp) => Promise<CliResult>;
  /** A success's --json output. */
  json: <T>(res: { code: number | null; stdout: string; stderr: string }) => T;
}

export async function startCliAdminPlatform(): Promise<CliAdminPlatform> {
  const home = await mkdtemp(join(tmpdir(), 'agenthost-cli-admin-'));
  const fake = await startFakeLlm();
  const p = await startTestPlatform({
    OPENAI_API_KEY: 'sk-openai-test',
    OPENAI_BASE_URL: fake.baseUrls.openai,
  });
  const alpha = await p.createAccount('adm-alpha', 'pro');
  const bravo = await p.createAccount('adm-bravo', 'pro');
  const withEmail = async (org: string, email: string): Promise<Account> => {
    const c = await createAccount(p.deps, { org, tier: 'pro', email });
    return { key: c.api_key, accountId: c.account.id, workspaceId: c.workspace_id };
  };
  const carol = await withEmail('adm-carol', 'carol@example.com');
  const dave = await withEmail('adm-dave', 'dave@example.com');

  async function run(args: string[], env: Record<string, string>, options: { input?: string } = {}) {
    const res = await runCliInProcess(args, env, options);
    for (const value of SECRET_VALUES) {
      assert.ok(!res.stdout.includes(value), `${args.join(' ')} printed a secret on stdout`);
      assert.ok(!res.stderr.includes(value), `${args.join(' ')} printed a secret on stderr`);
    }
    return res;
  }
  const envOf = (key: string, extra: Record<string, string> = {}) => ({
    AGENTHOST_URL: p.url,
    AGENTHOST_API_KEY: key,
    XDG_CONFIG_HOME: join(home, 'none'),
    ...extra,
  });
  async function fails(args: string[], env: Record<string, string>, code: number, pattern?: RegExp) {
    const res = await run(args, env);
    assert.equal(res.code, code, `${args.join(' ')}: ${res.stderr}`);
    assert.equal(res.stdout, '', `${args.join(' ')}: nothing on stdout`);
    assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
    if (pattern) assert.match(res.stderr, pattern, args.join(' '));
    return res;
  }
  const json = <T>(res: { code: number | null; stdout: string; stderr: string }): T => {
    assert.equal(res.code, 0, res.stderr);
    return JSON.parse(res.stdout) as T;
  };
  return { p, fake, home, alpha, bravo, carol, dave, run, envOf, fails, json };
}
