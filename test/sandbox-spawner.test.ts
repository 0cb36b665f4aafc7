/**
 * The local sandboxes' processes are forked by the spawner process (functions/adapters/local/bwrap/
 * spawner.ts), never by the platform's own process, whose event loop a fork would stall: the
 * spawner is the parent of every run; a spawner killed mid-run fails that run cleanly (no hang, no
 * process left) and the next exec starts a new one; and a platform that dies takes its spawner and
 * its runs with it. Needs bwrap, as test/sandbox-isolation.test.ts.
 */
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BwrapSandbox, UnisolatedSandbox } from '../functions/adapters/local/bwrap/sandboxes.ts';
import {
  DEFAULT_SANDBOX_LIMITS,
  SandboxUnavailableError,
  type SessionSpec,
} from '../functions/ports/sandbox.ts';

let dir: string;
let counter = 0;

function spec(): SessionSpec {
  return {
    runId: `spawner-${process.pid}-${++counter}`,
    workspaceId: 'ws-a',
    env: {},
    network: 'none',
    deadlineMs: Date.now() + 30_000,
    limits: DEFAULT_SANDBOX_LIMITS,
  };
}

/** The parent pid of `pid`, from /proc. */
function parentOf(pid: number): number {
  return Number(/^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pids: number[], withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    if (!pids.some(alive)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return !pids.some(alive);
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agenthost-spawner-'));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the spawner process', () => {
  it('is the parent of every sandboxed run, never the platform process (bubblewrap and unisolated)', async () => {
    const bwrap = new BwrapSandbox({ runsDir: join(dir, 'runs') });
    const session = await bwrap.openSession(spec());
    try {
      let bwrapParent: number | undefined;
      const result = await session.exec('echo hi', {
        // The sandbox's first process; its parent is bwrap, whose parent must be the spawner.
        onSpawn: (pid) => {
          bwrapParent = parentOf(parentOf(pid));
        },
      });
      assert.equal(result.stdout, 'hi\n');
      assert.ok(bwrap.spawner?.pid, 'the spawner runs');
      assert.equal(bwrapParent, bwrap.spawner.pid);
      assert.notEqual(bwrapParent, process.pid);
    } finally {
      await session.close();
    }

    const plain = new UnisolatedSandbox({ runsDir: join(dir, 'plain-runs') });
    const other = await plain.openSession(spec());
    try {
      let parent: number | undefined;
      await other.exec('true', { onSpawn: (pid) => (parent = parentOf(pid)) });
      assert.equal(parent, plain.spawner?.pid);
      assert.notEqual(parent, process.pid);
    } finally {
      await other.close();
    }
  });

  it('killed mid-run: the run fails cleanly, nothing of it is left, and the next exec starts a new spawner', async () => {
    const bwrap = new BwrapSandbox({ runsDir: join(dir, 'runs') });
    const session = await bwrap.openSession(spec());
    try {
      let sandboxPid = 0;
      let firstSpawner = 0;
      const started = Date.now();
      const failed = session.exec('sleep 60', {
        onSpawn: (pid) => {
          sandboxPid = pid;
          firstSpawner = bwrap.spawner!.pid!;
          process.kill(firstSpawner, 'SIGKILL');
        },
      });
      await assert.rejects(failed, (err: Error) => {
        assert.ok(err instanceof SandboxUnavailableError);
        assert.match(err.message, /spawner process exited/);
        return true;
      });
      assert.ok(Date.now() - started < 10_000, 'failed at once, not at the deadline');
      assert.ok(
        await gone([sandboxPid], 5_000),
        'the sandbox died with its spawner (bwrap --die-with-parent)',
      );

      const again = await session.exec('echo again');
      assert.equal(again.stdout, 'again\n');
      assert.ok(bwrap.spawner?.pid);
      assert.notEqual(bwrap.spawner.pid, firstSpawner, 'a new spawner');
    } finally {
      await session.close();
    }
  });

  it('ends, with its runs, when the platform process dies', async () => {
    const script = join(dir, 'platform.ts');
    const sandboxes = new URL('../functions/adapters/local/bwrap/sandboxes.ts', import.meta.url).href;
    await writeFile(
      script,
      `import { BwrapSandbox } from ${JSON.stringify(sandboxes)};
const sandbox = new BwrapSandbox({ runsDir: ${JSON.stringify(join(dir, 'child-runs'))} });
const session = await sandbox.openSession({ runId: 'doomed', workspaceId: 'w', env: {}, network: 'none',
  deadlineMs: Date.now() + 60_000, limits: ${JSON.stringify(DEFAULT_SANDBOX_LIMITS)} });
await session.exec('sleep 60', { onSpawn: (pid) => process.send({ spawner: sandbox.spawner.pid, sandbox: pid }) });
`,
    );
    const platform = fork(script, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const pids = await new Promise<{ spawner: number; sandbox: number }>((resolve, reject) => {
      platform.once('message', (m) => resolve(m as { spawner: number; sandbox: number }));
      platform.once('exit', (code) => reject(new Error(`the platform process exited early (${code})`)));
    });
    platform.kill('SIGKILL');
    assert.ok(await gone([pids.spawner, pids.sandbox], 5_000), 'spawner and sandbox ended with the platform');
  });
});
