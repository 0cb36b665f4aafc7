import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { runCli } from '../helpers/process.ts';

/**
 * Strings others set reach the CLI user's terminal: a workspace name, a tool's stderr in the logs,
 * a message the CLI relays. Their control characters must arrive escaped: raw, an ESC
 * sequence retitles or clears the terminal, CR overwrites the line printed, BEL rings.
 */

/** ESC (an OSC title and a clear screen), BEL, CR, DEL and C1's CSI. */
const HOSTILE = 'Team \u001b]0;pwned\u0007\r\u001b[2Jfake\u007f \u009b31m';
const SHOWN = String.raw`Team \x1b]0;pwned\x07\r\x1b[2Jfake\u007f \u009b31m`;
/** Any control character but the newline that ends each printed line. */
const RAW_CONTROL = /[^\P{Cc}\n]/u;

describe('the CLI shows control characters of the strings it prints escaped', () => {
  let p: TestPlatform;
  let home: string;
  let user: { key: string; accountId: string; workspaceId: string };
  let env: Record<string, string>;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'agenthost-cli-ctl-'));
    p = await startTestPlatform();
    user = await p.createAccount('ctl-user', 'pro');
    env = { AGENTHOST_URL: p.url, AGENTHOST_API_KEY: user.key, XDG_CONFIG_HOME: join(home, 'none') };
    const ws = await p.request('POST', '/workspaces', { key: user.key, body: { name: HOSTILE } });
    assert.equal(ws.status, 201, ws.text);
  });
  after(async () => {
    await p?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('in a table (workspaces list) and in key-value lines (whoami), on one line each', async () => {
    const list = await runCli(['workspaces', 'list'], env);
    assert.equal(list.code, 0, list.stderr);
    assert.doesNotMatch(list.stdout, RAW_CONTROL);
    const row = list.stdout.split('\n').find((l) => l.includes('Team'));
    assert.ok(row?.includes(SHOWN), `the name escaped, on its row: ${JSON.stringify(list.stdout)}`);
    assert.match(row ?? '', / owner +no /, 'the row goes on after the name');

    const who = await runCli(['whoami'], env);
    assert.equal(who.code, 0, who.stderr);
    assert.doesNotMatch(who.stdout, RAW_CONTROL);
    assert.match(who.stdout, /^workspaces +.*Team \\x1b\]0;pwned\\x07\\r\\x1b\[2Jfake/m);
  });

  it('in --json, which parses back to the very name', async () => {
    const json = await runCli(['workspaces', 'list', '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    assert.doesNotMatch(json.stdout, RAW_CONTROL, 'JSON leaves DEL and C1 raw; the CLI escapes them');
    const { workspaces } = JSON.parse(json.stdout) as { workspaces: { name: string }[] };
    assert.ok(workspaces.some((w) => w.name === HOSTILE));
  });

  it('in log lines: a tool’s stderr is one line, its controls and newlines escaped', async () => {
    const published = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
      key: user.key,
      body: {
        name: 'noisy',
        type: 'tool',
        description: 'echoes its input; writes terminal controls to stderr',
        supported_providers: ['any'],
        runtime: { command: String.raw`sh -c 'printf "\033]0;pwned\007\rhidden\nsecond line" >&2; cat'` },
        required_secrets: [],
      },
    });
    assert.equal(published.status, 201, published.text);
    const call = await runCli(['call', 'ctl-user/noisy@v1', '--input', '{"a":1}'], env);
    assert.equal(call.code, 0, call.stderr);
    const logs = await runCli(['logs', 'ctl-user/noisy@v1'], env);
    assert.equal(logs.code, 0, logs.stderr);
    assert.doesNotMatch(logs.stdout, RAW_CONTROL);
    assert.match(logs.stdout, /stderr tail: \\x1b\]0;pwned\\x07\\rhidden\\nsecond line \[/);
    const lines = logs.stdout.trim().split('\n');
    assert.ok(
      lines.every((l) => /^\d{4}-\d\d-\d\dT\S+Z (INFO|WARN|ERROR) /.test(l)),
      `every line is a log line: ${logs.stdout}`,
    );
  });

  it('in the error line', async () => {
    const res = await runCli(['workspaces', 'members', HOSTILE], env);
    assert.equal(res.code, 5, res.stderr);
    assert.doesNotMatch(res.stderr, RAW_CONTROL);
    assert.equal(res.stderr.split('\n').length, 2, 'one line');
    assert.ok(res.stderr.includes(SHOWN), res.stderr);
  });
});
