import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PASTA_PID_DIR, requirePasta } from '../../functions/adapters/local/pasta-network.ts';
import { processesWith } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * A platform that exits while pasta is attaching a sandbox's network (a service or a runner
 * starting as the platform stops) must not leave the pasta daemon behind: it is not the platform's
 * child, it holds the sandbox's network namespace, and only the next start on the same data dir
 * would have ended it (never, for a data dir removed meanwhile). Found as daemons reparented to
 * init after test runs, their deployments long gone.
 */

const PASTA_NETWORK = fileURLToPath(
  new URL('../../functions/adapters/local/pasta-network.ts', import.meta.url),
);

/**
 * The platform's side, in a process of its own: starts the attach with `pasta` and exits before the
 * attach has settled: the moment pasta's pid file appears (`opened`: pasta opens it as it starts),
 * or once the file names the daemon (`named`: pasta writes it as it daemonizes).
 */
const EXITS_WHILE_ATTACHING = `
import { readFileSync } from 'node:fs';
import { attachNetwork } from ${JSON.stringify(PASTA_NETWORK)};
const [pasta, when, pid, runDir, pidFile] = process.argv.slice(2);
attachNetwork({ pastaPath: pasta, asRoot: true, pid: Number(pid), runDir, plan: { hostLoopbackPorts: [], outbound: false } })
  .then(() => { settled = true; }, (err) => { console.error(err.message); process.exit(2); });
let settled = false;
const ready = () => {
  let text;
  try { text = readFileSync(pidFile, 'utf8'); } catch { return false; }
  return when === 'opened' || /^\\d+\\s*$/.test(text);
};
// 3: the attach had settled first, so the exit did not come in the middle of it.
setInterval(() => { if (ready()) process.exit(settled ? 3 : 0); }, 1);
`;

/** `pid: command line` of every pasta naming `pidFile`. */
async function pastasNaming(pidFile: string): Promise<string[]> {
  return (await processesWith(pidFile)).filter((line) => /\bpasta\b|passt/.test(line));
}

describe('a platform that exits while pasta attaches a sandbox’s network', () => {
  let dir = '';
  const standIns: ChildProcess[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-pasta-exit-'));
  });

  after(async () => {
    for (const stand of standIns) stand.kill('SIGKILL');
    // A failing run leaves nothing behind either.
    for (const line of await processesWith(dir)) {
      try {
        process.kill(Number(line.split(':')[0]), 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs the platform's side against a fresh stand-in; what pasta it left behind. */
  async function exitWhileAttaching(pasta: string, when: 'opened' | 'named'): Promise<string[]> {
    // The sandbox's stand-in: a process in user and network namespaces of its own, as bwrap makes.
    const stand = spawn('unshare', ['--user', '--map-root-user', '--net', 'sleep', '60'], {
      stdio: 'ignore',
    });
    standIns.push(stand);
    const pid = stand.pid as number;
    const ours = await netns(process.pid);
    await waitFor('the stand-in in its own network namespace', async () => {
      const ns = await netns(pid);
      return ns !== undefined && ns !== ours ? true : undefined;
    });
    const runDir = join(dir, 'runs', `run-${when}`);
    const pidFile = join(dir, 'runs', PASTA_PID_DIR, `run-${when}-${pid}.pid`);
    const script = join(dir, 'exits-while-attaching.mjs');
    await writeFile(script, EXITS_WHILE_ATTACHING);
    await promisify(execFile)(process.execPath, [script, pasta, when, String(pid), runDir, pidFile]);
    // Settled: no pasta names the file any more, or the one it names is a daemon (what leaked).
    return waitFor('pasta to have ended or daemonized', async () => {
      const found = await pastasNaming(pidFile);
      if (found.length === 0) return found;
      const named = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
      return found.some((line) => Number(line.split(':')[0]) === named) ? found : undefined;
    });
  }

  it('leaves no pasta behind when it exits as pasta starts: its launcher is killed', async () => {
    const left = await exitWhileAttaching(requirePasta(), 'opened');
    assert.deepEqual(left, [], 'a pasta outlived the platform that started it');
  });

  it('leaves no pasta daemon behind when it exits once pasta has daemonized: the pid file names it', async () => {
    // A launcher that outlives its daemon's start: the attach is still under way, its daemon named.
    const slow = join(dir, 'pasta-then-wait');
    await writeFile(slow, `#!/bin/sh\n${requirePasta()} "$@"\nexec sleep 5\n`, { mode: 0o755 });
    const left = await exitWhileAttaching(slow, 'named');
    assert.deepEqual(left, [], 'a pasta daemon outlived the platform that started it');
  });
});

/** The network namespace `pid` is in (the link /proc gives it), if it is alive. */
async function netns(pid: number): Promise<string | undefined> {
  return readlink(`/proc/${pid}/ns/net`).catch(() => undefined);
}
