/**
 * `npm start` on a port something else listens on: it stops before it creates the owner
 * account or prints a key, says CONFLICT, and prints a command that, run as printed, starts the
 * platform on a free port with the same data dir.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../helpers/wait-for.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A command as a user's shell runs it, from the repository; its own process group, to stop it whole. */
function shell(command: string, env: Record<string, string>) {
  const child = spawn('sh', ['-c', command], {
    cwd: ROOT,
    env: { ...process.env, PLATFORM_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return {
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    /** npm, the shell it runs and node: one process group, signalled together. */
    kill(signal: NodeJS.Signals) {
      try {
        process.kill(-(child.pid as number), signal);
      } catch {
        // gone already
      }
    },
  };
}

describe('npm start on a port in use', () => {
  let home: string;
  let blocker: ReturnType<typeof createServer>;
  let port: number;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'agenthost-start-port-'));
    blocker = createServer((_req, res) => res.end('someone else'));
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    port = (blocker.address() as AddressInfo).port;
  });
  after(async () => {
    blocker.close();
    await rm(home, { recursive: true, force: true });
  });

  it('stops before creating an account or printing a key, says CONFLICT, and prints a start command that works', {
    timeout: 120_000,
  }, async (t) => {
    const dataDir = join(home, 'data');
    const env = { HOST: '127.0.0.1', PLATFORM_DATA_DIR: dataDir };
    const refused = shell('npm start', { ...env, PORT: String(port) });
    t.after(() => refused.kill('SIGKILL'));
    const code = await refused.exited;
    const output = `${refused.stdout()}\n${refused.stderr()}`;
    assert.notEqual(code, 0, output);
    assert.match(refused.stderr(), /agenthost: CONFLICT: /);
    assert.match(refused.stderr(), new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use`));
    assert.doesNotMatch(output, /Created the owner account|Owner API key|ahk_/, 'no account, no key');
    assert.deepEqual(
      (await readdir(dataDir)).filter((f) => !/^platform\.(lock|json)$/.test(f)),
      [],
      'no store, no key file: only the lock the start took first',
    );
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'someone else');

    // The fix, as printed, run by a shell.
    const fix = /start on a free port: (.+?)\)?$/m.exec(refused.stderr())?.[1];
    assert.ok(fix, refused.stderr());
    assert.match(fix, /PORT=\d+ npm start$/);
    const freePort = Number(/PORT=(\d+)/.exec(fix)?.[1]);
    assert.notEqual(freePort, port);
    const started = shell(fix, {});
    t.after(() => started.kill('SIGKILL'));
    await waitFor(
      'the printed command to start the platform',
      () => (/listening on /.test(started.stdout()) ? true : undefined),
      60_000,
    );
    assert.match(
      started.stdout(),
      new RegExp(`listening on http://127\\.0\\.0\\.1:${freePort} \\(data in ${dataDir}\\)`),
    );
    assert.match(started.stdout(), /Created the owner account/, 'the first account is this one');
    assert.equal((await fetch(`http://127.0.0.1:${freePort}/health`)).status, 200);
    started.kill('SIGTERM');
    await started.exited;
  });
});
