/**
 * The local sandboxes' processes are forked by the spawner process (functions/adapters/local/bwrap/
 * spawner.ts), never by the platform's own process, whose event loop a fork would stall: the
 * spawner is the parent of every run; a spawner killed mid-run fails that run cleanly (no hang, no
 * process left) and the next exec starts a new one; and a platform that dies takes its spawner and
 * its runs with it. Needs bwrap, as test/adapters/sandbox-isolation.test.ts.
 */
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BwrapSandbox, UnisolatedSandbox } from '../../functions/adapters/local/bwrap/sandboxes.ts';
import { Spawner } from '../../functions/adapters/local/bwrap/spawner.ts';
import {
  DEFAULT_SANDBOX_LIMITS,
  SandboxUnavailableError,
  type SessionSpec,
} from '../../functions/ports/sandbox.ts';

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

/** Running (a zombie, which a container's init may never reap, counts as ended). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Live bwrap processes whose parent is gone (reparented to init): sandboxes nobody will end. */
function orphanedBwraps(): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, 'utf8');
      if (/^Name:\s+bwrap$/m.test(status) && /^PPid:\s+1$/m.test(status) && !/^State:\s+Z/m.test(status))
        found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
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
      await other.exec('sleep 0.5', { onSpawn: (pid) => (parent = parentOf(pid)) });
      assert.equal(parent, plain.spawner?.pid);
      assert.notEqual(parent, process.pid);
    } finally {
      await other.close();
    }
  });

  it('carries nothing of the platform’s environment but its compile cache, when it keeps one', async () => {
    // A platform process of its own, with its compile cache on or off, and a secret in its
    // environment; it prints the spawner's environment once a command has run through it.
    const script = join(dir, 'spawner-env.mjs');
    await writeFile(
      script,
      `import { enableCompileCache, getCompileCacheDir } from 'node:module';
import { readFileSync } from 'node:fs';
const cache = process.argv[2];
if (cache) enableCompileCache(cache);
const { Spawner } = await import(${JSON.stringify(join(import.meta.dirname, '../../functions/adapters/local/bwrap/spawner.ts'))});
const spawner = new Spawner();
// A command given no environment: what it sees of the spawner's (nothing, cache or not).
const child = spawner.spawn('/usr/bin/env', [], { env: {}, stdio: ['ignore', 'out', 'ignore'] });
let commandEnv = '';
child.stdio[1].on('data', (d) => { commandEnv += d; });
await new Promise((resolve) => child.once('close', resolve));
const environ = readFileSync('/proc/' + spawner.pid + '/environ', 'utf8').split('\\0').filter(Boolean);
process.stdout.write(JSON.stringify({ environ, cache: getCompileCacheDir(), commandEnv }));
spawner.stop();
`,
    );
    const environOf = (args: string[]) =>
      new Promise<{ environ: string[]; cache?: string; commandEnv: string }>((resolve, reject) => {
        const env: NodeJS.ProcessEnv = { ...process.env, PLATFORM_SECRET_OF_THE_TEST: 'not for the spawner' };
        delete env.NODE_COMPILE_CACHE;
        const child = fork(script, args, { env, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
        let out = '';
        child.stdout?.on('data', (d) => {
          out += d;
        });
        child.once('error', reject);
        child.once('exit', (code) =>
          code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exited ${code}`)),
        );
      });
    // NODE_CHANNEL_*: what fork() itself gives a child for its IPC channel.
    const own = (environ: string[]) => environ.filter((v) => !v.startsWith('NODE_CHANNEL_'));
    const cached = await environOf([join(dir, 'compile-cache')]);
    assert.ok(cached.cache?.startsWith(join(dir, 'compile-cache')), cached.cache);
    assert.deepEqual(own(cached.environ), [`NODE_COMPILE_CACHE=${cached.cache}`]);
    assert.equal(cached.commandEnv, '', 'a command sees only the environment its exec gives it');
    const uncached = await environOf([]);
    assert.equal(uncached.cache, undefined);
    assert.deepEqual(own(uncached.environ), []);
    assert.equal(uncached.commandEnv, '');
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

  it('a kill that overtakes bwrap’s report of its sandbox (a delete right after a deploy) never hangs the run and leaves no process behind', async () => {
    // As root, bwrap's sandbox waits for the platform to write its id maps, and bwrap reports the
    // sandbox's pid first: a kill sent before that report arrives killed bwrap alone, and the
    // sandbox waited forever on its parent, holding the run's pipes (the run never ended).
    const bwrap = new BwrapSandbox({ runsDir: join(dir, 'runs') });
    const session = await bwrap.openSession(spec());
    const before = new Set(orphanedBwraps());
    try {
      for (let delay = 0; delay < 60; delay += 3) {
        const aborter = new AbortController();
        const run = session.exec('sleep 60', { signal: aborter.signal });
        setTimeout(() => {
          // A busy platform: bwrap's report waits in the channel while the kill goes out first.
          const until = Date.now() + 100;
          while (Date.now() < until);
          aborter.abort();
        }, delay);
        const settled = await Promise.race([
          run.then(
            () => 'ended',
            () => 'failed',
          ),
          new Promise((r) => setTimeout(r, 10_000, 'hung')),
        ]);
        assert.notEqual(settled, 'hung', `the run killed after ${delay} ms never ended`);
      }
      const left = async () => orphanedBwraps().filter((pid) => !before.has(pid));
      const until = Date.now() + 3_000;
      while ((await left()).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(await left(), [], 'no sandbox outlived its bwrap');
    } finally {
      // Bounded: without the fix the hung run would keep close() waiting too.
      await Promise.race([session.close(), new Promise((r) => setTimeout(r, 5_000))]);
    }
  });

  it('a child whose pipe a stray process still holds closes once the platform destroys its ends, as a ChildProcess does', async () => {
    const spawner = new Spawner();
    // The shell leaves a process on its stdout that is neither its child nor in its process group
    // (a subshell starts it in a session of its own, and exits), so no kill of the child reaches it.
    const child = spawner.spawn('/bin/sh', ['-c', '(setsid sleep 300 & echo $!); exec sleep 300'], {
      env: { PATH: '/usr/bin:/bin' },
      stdio: ['in', 'out', 'out'],
    });
    let stray = 0;
    try {
      child.stdout!.on('data', (d: Buffer) => {
        stray ||= Number(d.toString().trim());
      });
      const closed = new Promise((r) => child.once('close', () => r('closed')));
      await new Promise((r) => child.once('spawn', r));
      while (!stray) await new Promise((r) => setTimeout(r, 10));
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      const held = await Promise.race([closed, new Promise((r) => setTimeout(r, 500, 'open'))]);
      assert.equal(held, 'open', 'the stray process holds the pipe');
      for (const s of child.stdio) s?.destroy();
      const settled = await Promise.race([closed, new Promise((r) => setTimeout(r, 5_000, 'open'))]);
      assert.equal(settled, 'closed');
    } finally {
      if (stray) process.kill(stray, 'SIGKILL');
      spawner.stop();
    }
  });

  it('a run gets only stdin, stdout and stderr, uid 1000 without capabilities, no_new_privs and its limits, also when the platform inherited a stray descriptor', async () => {
    const script = join(dir, 'platform.ts');
    const sandboxes = new URL('../../functions/adapters/local/bwrap/sandboxes.ts', import.meta.url).href;
    await writeFile(
      script,
      `import { BwrapSandbox } from ${JSON.stringify(sandboxes)};
const sandbox = new BwrapSandbox({ runsDir: ${JSON.stringify(join(dir, 'child-runs'))} });
const session = await sandbox.openSession({ runId: 'doomed', workspaceId: 'w', env: {}, network: 'none',
  deadlineMs: Date.now() + 60_000, limits: ${JSON.stringify(LIMITS)} });
const seen = await session.exec(${JSON.stringify(PROBE)});
process.send({ seen: seen.stdout, inherited: ${JSON.stringify(STRAY_FD)} });
await session.exec('sleep 60', { onSpawn: (pid) => process.send({ spawner: sandbox.spawner.pid, sandbox: pid }) });
`,
    );
    // fd 4 of the platform process: inherited without close-on-exec, as from a careless parent.
    const platform = fork(script, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc', 'pipe'] });
    const messages: Record<string, unknown>[] = [];
    const next = () =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        if (messages.length) return resolve(messages.shift()!);
        platform.once('message', () => resolve(messages.shift()!));
        platform.once('exit', (code) => reject(new Error(`the platform process exited early (${code})`)));
      });
    platform.on('message', (m) => messages.push(m as Record<string, unknown>));
    try {
      const { seen } = (await next()) as { seen: string };
      assertProbe(seen);
      const pids = (await next()) as { spawner: number; sandbox: number };
      // ends, with its runs, when the platform process dies
      platform.kill('SIGKILL');
      assert.ok(
        await gone([pids.spawner, pids.sandbox], 5_000),
        'spawner and sandbox ended with the platform',
      );
    } finally {
      platform.kill('SIGKILL');
    }
  });

  it('a platform that dies while a sandbox waits for it to be set up takes that sandbox too', async () => {
    // The platform dies (SIGKILL) after bwrap has started its sandbox and before the platform
    // wrote the sandbox's id maps: the sandbox waits on bwrap, which the spawner kills. Without
    // the spawner killing bwrap's own child first, the sandbox would wait forever.
    if (process.getuid?.() !== 0) return; // unprivileged, bwrap writes its id maps itself: no wait
    const script = join(dir, 'dying-platform.ts');
    const sandboxes = new URL('../../functions/adapters/local/bwrap/sandboxes.ts', import.meta.url).href;
    await writeFile(
      script,
      `import { readFileSync } from 'node:fs';
import { BwrapSandbox } from ${JSON.stringify(sandboxes)};
const sandbox = new BwrapSandbox({ runsDir: ${JSON.stringify(join(dir, 'dying-runs'))} });
const session = await sandbox.openSession({ runId: 'dying', workspaceId: 'w', env: {}, network: 'none',
  deadlineMs: Date.now() + 60_000, limits: ${JSON.stringify(LIMITS)} });
void session.exec('sleep 60');
const kids = (pid) => { try { return readFileSync('/proc/' + pid + '/task/' + pid + '/children', 'utf8').split(' ').filter(Boolean); } catch { return []; } };
// Yield until the spawner has started bwrap; from then on spin without yielding, so this process
// never handles bwrap's report: once bwrap has a child (its sandbox, now waiting for the id maps
// this process would write), die.
let bwrap;
while (!bwrap) {
  await new Promise((r) => setTimeout(r, 1));
  const spawner = sandbox.spawner?.pid;
  bwrap = spawner ? kids(spawner)[0] : undefined;
}
for (const until = Date.now() + 5_000; Date.now() < until; ) {
  const inner = kids(bwrap)[0];
  if (inner) {
    process.send({ sandbox: Number(inner) });
    process.kill(process.pid, 'SIGKILL');
  }
}
process.exit(3);
`,
    );
    const platform = fork(script, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    try {
      const { sandbox } = await new Promise<{ sandbox: number }>((resolve, reject) => {
        platform.once('message', (m) => resolve(m as { sandbox: number }));
        platform.once('exit', (code, signal) =>
          reject(new Error(`the platform process exited before its sandbox started (${code ?? signal})`)),
        );
      });
      assert.ok(await gone([sandbox], 5_000), 'the sandbox ended with the platform');
    } finally {
      platform.kill('SIGKILL');
    }
  });

  it('the same holds when the platform forks bwrap itself (spawner: in-process, for the bench)', async () => {
    const sandbox = new BwrapSandbox({ runsDir: join(dir, 'runs'), spawner: 'in-process' });
    const session = await sandbox.openSession({ ...spec(), limits: LIMITS });
    try {
      assertProbe((await session.exec(PROBE)).stdout);
      assert.equal(sandbox.spawner, undefined);
    } finally {
      await session.close();
    }
  });
});

const STRAY_FD = 4;
const LIMITS = {
  ...DEFAULT_SANDBOX_LIMITS,
  cpuSeconds: 7,
  memoryBytes: 768 * 1024 * 1024,
  processes: 20,
  diskBytes: 8 * 1024 * 1024,
};
const PROBE = 'ls /proc/self/fd; echo ---; cat /proc/self/limits; echo ---; cat /proc/self/status';

/** What PROBE printed: the descriptors, limits and identity of a command in the sandbox. */
function assertProbe(seen: string): void {
  const [fds, limits, status] = seen.split('---\n') as [string, string, string];
  // 3 is ls's own handle on /proc/self/fd.
  assert.deepEqual(fds.trim().split('\n'), ['0', '1', '2', '3']);
  const limit = (name: string) => new RegExp(`^${name}\\s+(\\S+)\\s+(\\S+)`, 'm').exec(limits)?.slice(1, 3);
  const asRoot = process.getuid?.() === 0;
  assert.deepEqual(limit('Max cpu time'), ['7', '8']);
  assert.deepEqual(limit('Max file size'), [String(8 * 1024 * 1024), String(8 * 1024 * 1024)]);
  assert.deepEqual(limit('Max data size'), [String(768 * 1024 * 1024), String(768 * 1024 * 1024)]);
  const as = String(768 * 1024 * 1024 + 4 * 1024 ** 3);
  assert.deepEqual(limit('Max address space'), [as, as]);
  assert.deepEqual(limit('Max processes'), asRoot ? ['20', '20'] : ['21', '21']);
  assert.deepEqual(limit('Max core file size'), ['0', '0']);
  const field = (name: string) => new RegExp(`^${name}:[ \\t]*(.*)$`, 'm').exec(status)?.[1]?.trim();
  assert.equal(field('Uid'), '1000\t1000\t1000\t1000');
  assert.equal(field('Gid'), '1000\t1000\t1000\t1000');
  assert.equal(field('Groups'), '');
  for (const cap of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'])
    assert.equal(field(cap), '0000000000000000', cap);
  assert.equal(field('NoNewPrivs'), '1');
}
