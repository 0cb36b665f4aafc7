/**
 * The local sandbox (bubblewrap) against what it must hold: a run sees only its own bundle, files,
 * environment and processes; nothing of the platform (data dir, key file, repository, /root); no
 * network unless it asked for egress (test/adapters/service-network.test.ts has what egress reaches); and
 * fork bombs, memory hogs, disk fillers and endless loops stop at their limits while the platform
 * stays responsive. Each test prints its figure. Needs
 * bwrap (and util-linux prlimit/setpriv); run as root here, where sandboxed processes are mapped
 * to an unprivileged host uid.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bwrapArgs } from '../../functions/adapters/local/bwrap/bwrap-args.ts';
import { removeStaleRuns } from '../../functions/adapters/local/bwrap/run-dir.ts';
import { BwrapSandbox, UnisolatedSandbox } from '../../functions/adapters/local/bwrap/sandboxes.ts';
import { detectBwrap } from '../../functions/adapters/local/bwrap/start-up-check.ts';
import {
  DEFAULT_SANDBOX_LIMITS,
  type SandboxLimits,
  SandboxPathError,
  type SessionSpec,
} from '../../functions/ports/sandbox.ts';
import { tarGzOf } from '../helpers/bundles.ts';
import { processesWith } from '../helpers/process.ts';

let dataDir: string;
let runsDir: string;
let bundle: Buffer;
let sandbox: BwrapSandbox;
let counter = 0;

function spec(
  overrides: Omit<Partial<SessionSpec>, 'limits'> & { limits?: Partial<SandboxLimits> } = {},
): SessionSpec {
  const { limits, ...rest } = overrides;
  return {
    runId: `run-${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 8)}`,
    workspaceId: 'ws-a',
    env: {},
    network: 'none',
    deadlineMs: Date.now() + 20_000,
    ...rest,
    limits: { ...DEFAULT_SANDBOX_LIMITS, ...limits },
  };
}

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'agenthost-sandbox-data-'));
  // Like the platform's data dir: 0700, a key file, runs inside it.
  await writeFile(join(dataDir, 'vault.key'), 'TOP-SECRET-VAULT-KEY\n', { mode: 0o600 });
  runsDir = join(dataDir, 'runs');
  bundle = await tarGzOf(
    {
      'src/index.js':
        'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => ' +
        'console.log(JSON.stringify({ got: JSON.parse(s), greeting: process.env.GREETING, cwd: process.cwd() })));\n',
      'run.sh': '#!/bin/sh\necho "run.sh says $1"\n',
    },
    { lib: 'src' },
  );
  sandbox = new BwrapSandbox({ runsDir });
});

after(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** Resolves once no child of this process runs the spawner's program (fails after 5 s). */
async function waitForNoSpawnerChild(): Promise<void> {
  const spawnerChildren = async () => {
    const found: string[] = [];
    for (const pid of await readdir('/proc').catch(() => [])) {
      if (!/^\d+$/.test(pid)) continue;
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      if (cmdline.includes('spawner-process')) found.push(pid);
    }
    return found;
  };
  const until = Date.now() + 5_000;
  let left = await spawnerChildren();
  while (left.length > 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    left = await spawnerChildren();
  }
  assert.deepEqual(left, [], 'a spawner process outlived the start-up check');
}

describe('the bubblewrap sandbox: a run and its inputs', () => {
  it('is available here (start-up check)', async (t) => {
    const found = await detectBwrap();
    assert.equal(found.available, true, found.reason);
    assert.deepEqual(found.egress, { available: true }, 'an egress probe through pasta ran too');
    t.diagnostic(
      `detectBwrap: bubblewrap ${found.version}, probe sessions (no network, egress) ran \`true\``,
    );
    // Without pasta, the check says egress sessions cannot run (and why), and the rest still can.
    const missing = await detectBwrap({ pastaPath: '/nonexistent/pasta' });
    assert.equal(missing.available, true);
    assert.equal(missing.egress?.available, false);
    assert.match(missing.egress?.reason ?? '', /pasta could not give the sandbox its network/);
    // The probes' spawner (a Node process of about 70 MB) does not outlive them: the platform's
    // own sandbox starts its spawner at its first run.
    await waitForNoSpawnerChild();
  });

  it('a command sees its stdin, environment and bundle, and its stdout comes back', async (t) => {
    const session = await sandbox.openSession(
      spec({ env: { GREETING: 'hello from the env' }, bundle: { data: bundle, format: 'tar.gz' } }),
    );
    try {
      assert.equal(session.workDir, '/work');
      const started = Date.now();
      const result = await session.exec('node src/index.js', { stdin: JSON.stringify({ n: 42 }) });
      const took = Date.now() - started;
      assert.equal(result.exitCode, 0, result.stderrTail);
      assert.deepEqual(JSON.parse(result.stdout), {
        got: { n: 42 },
        greeting: 'hello from the env',
        cwd: '/work',
      });
      const listing = await session.exec(
        'ls lib/ && ./run.sh ok && id -un && hostname && echo "$HOME $PATH"',
      );
      assert.equal(
        listing.stdout,
        'index.js\nrun.sh says ok\nsandbox\nsandbox\n/work /opt/node/bin:/usr/local/bin:/usr/bin:/bin\n',
      );
      const py = await session.exec('python3 -c "import sys; print(sys.stdin.read()[::-1])"', {
        stdin: 'abc',
      });
      assert.equal(py.stdout, 'cba\n');
      const bare = Date.now();
      assert.equal((await session.exec('true')).exitCode, 0);
      t.diagnostic(
        `node src/index.js from the bundle: ${took} ms; an empty command (\`true\`): ${Date.now() - bare} ms`,
      );
    } finally {
      await session.close();
    }
  });

  it('reports exit codes and signals, caps stdout and keeps the tail of stderr', async (t) => {
    const session = await sandbox.openSession(spec({ limits: { outputBytes: 1000 } }));
    try {
      const seven = await session.exec('echo partial; exit 7');
      assert.deepEqual([seven.exitCode, seven.signal, seven.stdout], [7, null, 'partial\n']);
      const term = await session.exec('kill -TERM $$');
      assert.deepEqual([term.exitCode, term.signal, term.timedOut], [null, 'SIGTERM', false]);
      const kill = await session.exec('sh -c "kill -KILL \\$\\$"');
      assert.equal(kill.signal, 'SIGKILL');

      const big = await session.exec('head -c 5000000 /dev/zero | tr "\\0" a; echo done >&2');
      assert.equal(big.exitCode, 0, 'the writer is never blocked or killed: the rest is read and dropped');
      assert.equal(big.stdout.length, 1000);
      assert.equal(big.stdoutTruncated, true);
      assert.equal(big.stderrTail, 'done\n');
      const noisy = await session.exec('i=0; while [ $i -lt 3000 ]; do echo "line $i" >&2; i=$((i+1)); done');
      assert.ok(noisy.stderrTail.length <= 8192 && noisy.stderrTail.length > 8000);
      assert.ok(noisy.stderrTail.endsWith('line 2999\n'));
      t.diagnostic(
        `5 MB written to stdout: 1000 bytes kept, truncated flagged, exit 0 in ${big.durationMs} ms; stderr: last ${noisy.stderrTail.length} bytes kept`,
      );
    } finally {
      await session.close();
    }
  });

  it('host-side file access stays inside the working directory, whatever the run leaves there', async (t) => {
    const s = spec({ files: [{ path: 'input/01-report.txt', data: Buffer.from('R') }] });
    const session = await sandbox.openSession(s);
    try {
      const made = await session.exec(
        'ln -s / rootlink && ln -s /etc/passwd pw && mkdir d && echo hi > d/f && ln -s .. d/up && mkfifo fifo && ' +
          'mkdir locked && echo x > locked/y && chmod 000 locked && cat input/01-report.txt',
      );
      assert.equal(made.exitCode, 0, made.stderrTail);
      assert.equal(made.stdout, 'R');
      assert.equal((await session.readFile('d/f')).toString(), 'hi\n');
      assert.equal((await session.readFile('./d//f')).toString(), 'hi\n');
      for (const bad of [
        'pw',
        'rootlink/etc/passwd',
        'd/up/d/f',
        '../x',
        '/etc/passwd',
        'd/../d/f',
        'fifo',
      ]) {
        await assert.rejects(session.readFile(bad), SandboxPathError, bad);
      }
      const outside = join(tmpdir(), `agenthost-escape-${process.pid}`);
      await assert.rejects(session.writeFile(`rootlink${outside}`, 'x'), SandboxPathError);
      await assert.rejects(session.writeFile('pw', 'x'), SandboxPathError);
      await assert.rejects(session.writeFile('d/up/evil', 'x'), SandboxPathError);
      assert.equal(existsSync(outside), false);
      await session.writeFile('out/nested/result.json', '{"ok":true}');
      const back = await session.exec('cat out/nested/result.json && echo more >> out/nested/result.json');
      assert.equal(back.stdout, '{"ok":true}');
      // The platform reads what the run locked away (chmod 000) only when it runs as root.
      const locked = process.getuid?.() === 0 ? ['locked/y'] : [];
      assert.deepEqual(await session.listFiles(), [
        'd/f',
        'input/01-report.txt',
        ...locked,
        'out/nested/result.json',
      ]);
      assert.deepEqual(await session.listFiles('out'), ['out/nested/result.json']);
      await assert.rejects(session.listFiles('rootlink'), SandboxPathError);
      t.diagnostic(
        'symlinks to /, to /etc/passwd and to .., a FIFO: every host read/write through them refused',
      );
    } finally {
      await session.close();
    }
    assert.equal(
      existsSync(join(runsDir, s.runId)),
      false,
      'close() removed the run dir (0-mode dir included)',
    );
  });
});

describe('leftovers', () => {
  it('removeStaleRuns clears run directories a crashed platform left, unwritable ones included', async (t) => {
    const stale = join(dataDir, 'stale-runs');
    await mkdir(join(stale, 'run-1', 'work', 'locked'), { recursive: true });
    await writeFile(join(stale, 'run-1', 'work', 'locked', 'f'), 'x');
    await chmod(join(stale, 'run-1', 'work', 'locked'), 0);
    await mkdir(join(stale, 'run-2'));
    assert.equal(await removeStaleRuns(stale), 2);
    assert.deepEqual(await readdir(stale), []);
    assert.equal(await removeStaleRuns(join(dataDir, 'no-such-dir')), 0);
    t.diagnostic('2 stale run directories removed');
  });
});

describe('the bubblewrap sandbox: isolation', () => {
  it("two sessions of different workspaces see neither each other's files, environment nor processes", async (t) => {
    const a = await sandbox.openSession(
      spec({
        workspaceId: 'ws-a',
        env: { SECRET_A: 'alpha-secret-value' },
        files: [{ path: 'a-private.txt', data: Buffer.from('alpha file') }],
      }),
    );
    const b = await sandbox.openSession(spec({ workspaceId: 'ws-b', env: { SECRET_B: 'beta' } }));
    try {
      // A's run lives while B looks, and is stopped once B has looked (not waited out).
      const stopA = new AbortController();
      const aRun = a.exec('sleep 30', { signal: stopA.signal });
      await new Promise((r) => setTimeout(r, 300));
      // B looks for A's file everywhere but the system's read-only trees, where no run's file is:
      // /usr (Debian's packages, a JDK and a browser among them, most of a 20 s walk under CI's
      // load), /proc and /sys (the kernel's; /proc's environ is read above).
      const seen = await b.exec(
        'ls -a /work; echo ---; ps -eo pid,args; echo ---; cat /proc/[0-9]*/environ 2>/dev/null | tr "\\0" "\\n"; echo ---; ' +
          `ls ${runsDir} 2>&1; find / \\( -path /proc -o -path /sys -o -path /usr \\) -prune -o -name "a-priv""ate.txt" -print 2>/dev/null; echo end`,
      );
      stopA.abort();
      await aRun;
      assert.equal(seen.exitCode, 0, seen.stderrTail);
      const [files, processes, environ, rest] = seen.stdout.split('---\n');
      assert.equal(files, '.\n..\n');
      assert.doesNotMatch(seen.stdout, /alpha|a-private\.txt|sleep 30/);
      const pids = processes!.trim().split('\n').slice(1);
      assert.ok(pids.length <= 4, `only the run's own processes: ${processes}`);
      assert.match(processes!, /^\s+1 /m, 'pid 1 is the sandbox reaper: a pid namespace of its own');
      assert.match(environ!, /SECRET_B=beta/);
      assert.match(rest!, /No such file or directory\nend\n$/);
      t.diagnostic(`run B saw ${pids.length} processes (its own), none of A's files or environment`);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a run cannot read the platform data dir, its key file, the repository or /root', async (t) => {
    const session = await sandbox.openSession(spec());
    try {
      const key = join(dataDir, 'vault.key');
      const result = await session.exec(
        `cat ${key}; echo "cat=$?"; ls ${dataDir}; echo "ls=$?"; ls /root; echo "root=$?"; ` +
          `ls ${process.cwd()}/package.json; echo "repo=$?"; cat /proc/1/root${key}; echo "viaproc=$?"`,
      );
      assert.doesNotMatch(result.stdout + result.stderrTail, /TOP-SECRET/);
      assert.equal(result.stdout, 'cat=1\nls=2\nroot=2\nrepo=2\nviaproc=1\n');
      assert.match(result.stderrTail, /vault\.key: No such file or directory/);
      const view = await session.exec('ls /; echo ---; cat /etc/passwd; echo ---; ls /etc/ssl; id -u');
      const [top, passwd, rest] = view.stdout.split('---\n');
      assert.deepEqual(top!.trim().split('\n'), [
        'bin',
        'dev',
        'etc',
        'lib',
        'lib64',
        'opt',
        'proc',
        'sbin',
        'tmp',
        'usr',
        'work',
      ]);
      assert.equal(passwd!.trim().split('\n').length, 3, "a synthetic passwd, not the host's");
      assert.equal(rest, 'certs\nopenssl.cnf\n1000\n', 'no /etc/ssl/private');
      const args = bwrapArgs({
        version: '0.8.0',
        asRoot: process.getuid?.() === 0,
        network: 'none',
        limits: DEFAULT_SANDBOX_LIMITS,
        env: { SECRET: 'value' },
        work: join(runsDir, 'RUN', 'work'),
        identityDir: join(runsDir, 'RUN', 'etc'),
        nodePath: process.execPath,
      });
      const sources = args.filter((_, i) => i > 0 && /^--(ro-)?bind(-try)?$/.test(args[i - 1]!));
      for (const source of sources) {
        assert.ok(
          (!source.startsWith('/root') && !source.startsWith(process.cwd())) || source === process.execPath,
          source,
        );
        if (source.startsWith(dataDir)) assert.match(source, /\/runs\/RUN\/(work|etc\/\w+)/);
      }
      t.diagnostic(`${key}: absent inside the sandbox (cat exit 1); bind sources: ${sources.join(' ')}`);
    } finally {
      await session.close();
    }
  });

  it("has no network with network 'none' (not even the host's loopback); 'egress' reaches only listed host ports", async (t) => {
    const server = createTcpServer((socket) => socket.end('hello from the host\n'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const probe = `node -e "const s=require('net').connect(${port},'127.0.0.1');s.on('data',d=>{process.stdout.write(d);process.exit(0)});s.on('error',e=>{console.log(e.code);process.exit(3)})"; ls /sys/class/net 2>&1 | head -1; cat /proc/net/dev | tail -n +3 | cut -d: -f1`;
    const closed = await sandbox.openSession(spec());
    const listed = await sandbox.openSession(spec({ network: 'egress', hostLoopbackPorts: [port] }));
    const unlisted = await sandbox.openSession(spec({ network: 'egress' }));
    try {
      const none = await closed.exec(probe);
      assert.match(none.stdout, /^ECONNREFUSED\n/);
      assert.doesNotMatch(none.stdout, /eth|ens|enp|wlan/);
      const egress = await listed.exec(probe);
      assert.match(egress.stdout, /^hello from the host\n/);
      assert.match(egress.stdout, /eth0/, 'egress has an interface to the outside (pasta)');
      const other = await unlisted.exec(probe);
      assert.match(other.stdout, /^ECONNREFUSED\n/, 'egress without the port listed does not reach it');
      t.diagnostic(
        `none: connect to the host's 127.0.0.1:${port} → ECONNREFUSED (interfaces: ${none.stdout.split('\n').slice(2).join(' ').trim()}); egress with the port listed: connected; without: ECONNREFUSED`,
      );
    } finally {
      await Promise.all([closed.close(), listed.close(), unlisted.close()]);
      server.close();
    }
  });
});

describe('the bubblewrap sandbox: limits (one at a time)', () => {
  let http: Server;
  let url: string;
  before(async () => {
    http = createServer((_req, res) => res.end('pong'));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(http.address() as { port: number }).port}/`;
  });
  after(() => http.close());

  it('a fork bomb is contained by the process limit and the platform stays responsive', async (t) => {
    const processes = 20;
    const s = spec({ limits: { processes }, deadlineMs: Date.now() + 3000 });
    const session = await sandbox.openSession(s);
    const marker = s.runId;
    try {
      let worstLag = 0;
      let last = Date.now();
      const ticker = setInterval(() => {
        const now = Date.now();
        worstLag = Math.max(worstLag, now - last - 10);
        last = now;
      }, 10);
      // The classic bomb, under bash: a failed fork is retried, so the bomb keeps pressing.
      const run = session.exec(`exec bash -c ': ${marker}; :(){ :|:& };:; sleep 30'`);
      await new Promise((r) => setTimeout(r, 700));
      let peak = 0;
      let slowest = 0;
      for (let i = 0; i < 5; i++) {
        const asked = Date.now();
        const res = await fetch(url);
        assert.equal(await res.text(), 'pong');
        slowest = Math.max(slowest, Date.now() - asked);
        peak = Math.max(peak, (await processesWith(marker)).length);
        await new Promise((r) => setTimeout(r, 150));
      }
      const result = await run;
      clearInterval(ticker);
      assert.equal(result.timedOut, true);
      assert.equal(result.signal, 'SIGKILL');
      // bwrap and its reaper carry the command line too: at most the limit plus those two.
      assert.ok(peak >= 5 && peak <= processes + 2, `processes seen on the host: ${peak}`);
      assert.ok(slowest < 1000, `HTTP answer took ${slowest} ms`);
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(await processesWith(marker), [], 'nothing of the run survives the deadline');
      t.diagnostic(
        `fork bomb contained: at most ${peak} processes of the run on the host (limit ${processes} + bwrap); platform answered HTTP in ≤ ${slowest} ms and its timers ran ≤ ${worstLag} ms late while it ran; killed at the deadline, 0 survivors`,
      );
    } finally {
      await session.close();
    }
  });

  it('a memory hog fails under the memory limit (python and node)', async (t) => {
    const session = await sandbox.openSession(spec({ limits: { memoryBytes: 256 * 1024 * 1024 } }));
    const roomy = await sandbox.openSession(spec());
    try {
      const py = await session.exec('python3 -c "b = bytearray(10**10)"');
      assert.equal(py.exitCode, 1);
      assert.match(py.stderrTail, /MemoryError/);
      const small = await session.exec('python3 -c "b = bytearray(100 * 2**20); print(len(b))"');
      assert.equal(small.stdout, `${100 * 2 ** 20}\n`, 'below the limit works');
      const node = await roomy.exec('node -e "Buffer.alloc(2 * 1024 ** 3, 1)"');
      assert.notEqual(node.exitCode, 0);
      assert.match(node.stderrTail, /RangeError|allocation failed|out of memory/i);
      const fine = await roomy.exec('node -e "console.log(Buffer.alloc(300 * 1024 ** 2, 1).length)"');
      assert.equal(fine.stdout, `${300 * 1024 ** 2}\n`, fine.stderrTail);
      t.diagnostic(
        `python bytearray(10 GB) under 256 MB: MemoryError in ${py.durationMs} ms; node Buffer.alloc(2 GB) under the default 1 GB: ${node.stderrTail.match(/RangeError[^\n]*/)?.[0] ?? 'failed'} in ${node.durationMs} ms; 300 MB in node still fine`,
      );
    } finally {
      await Promise.all([session.close(), roomy.close()]);
    }
  });

  it('a disk filler stops at the disk limit (one big file, /tmp, and many files)', async (t) => {
    const diskBytes = 8 * 1024 * 1024;
    const s = spec({ limits: { diskBytes } });
    const session = await sandbox.openSession(s);
    try {
      const big = await session.exec(
        'head -c 2G /dev/zero > f; echo "head=$?"; wc -c < f; head -c 100M /dev/zero > /tmp/t; wc -c < /tmp/t',
      );
      assert.equal(big.stdout, `head=153\n${diskBytes}\n${diskBytes}\n`, big.stderrTail);
      const many = await session.exec(
        'i=0; while :; do head -c 1048576 /dev/zero > many$i || exit 3; i=$((i+1)); done',
      );
      assert.equal(many.signal, 'SIGKILL');
      assert.match(many.stderrTail, /grew past the disk limit/);
      const written = (await session.listFiles()).filter((p) => p.startsWith('many')).length;
      let total = 0;
      for (const p of await session.listFiles())
        total += (await stat(join(runsDir, s.runId, 'work', p))).size;
      t.diagnostic(
        `one 2 GB file: cut at ${diskBytes} bytes (SIGXFSZ, exit 153), /tmp too; 1 MB files in a loop: killed after ${many.durationMs} ms with ${written} files, ${(total / 2 ** 20).toFixed(0)} MB in all (limit 8 MB, checked every 100 ms)`,
      );
    } finally {
      await session.close();
    }
  });

  it('an endless loop is killed at its deadline with its whole tree; so is an aborted one', async (t) => {
    const s = spec({ deadlineMs: Date.now() + 60_000 });
    const session = await sandbox.openSession(s);
    const marker = s.runId;
    try {
      const result = await session.exec(
        `: ${marker}; sleep 100 & (while :; do :; done) & while :; do :; done`,
        {
          timeoutMs: 1000,
        },
      );
      assert.equal(result.timedOut, true);
      assert.equal(result.signal, 'SIGKILL');
      assert.equal(result.exitCode, null);
      const margin = result.durationMs - 1000;
      assert.ok(margin >= 0 && margin < 500, `killed ${margin} ms after the deadline`);
      const left = await processesWith(marker);
      assert.deepEqual(left, [], 'no bwrap, shell, loop or sleep of the run survives');

      const controller = new AbortController();
      setTimeout(() => controller.abort(), 300);
      const aborted = await session.exec(`: ${marker}; sleep 100`, { signal: controller.signal });
      assert.deepEqual([aborted.signal, aborted.timedOut], ['SIGKILL', false]);
      assert.deepEqual(await processesWith(marker), []);
      t.diagnostic(
        `endless loop with a 1000 ms timeout: killed after ${result.durationMs} ms (${margin} ms late), 0 processes of the run left on the host; abort after 300 ms: ended after ${aborted.durationMs} ms`,
      );
    } finally {
      await session.close();
    }
  });

  it('a CPU burner is stopped by the CPU limit before the deadline', async (t) => {
    const session = await sandbox.openSession(spec({ limits: { cpuSeconds: 1 } }));
    try {
      const result = await session.exec('while :; do :; done');
      assert.equal(result.signal, 'SIGXCPU');
      assert.equal(result.timedOut, false);
      assert.ok(result.durationMs < 4000);
      t.diagnostic(`cpuSeconds 1: SIGXCPU after ${result.durationMs} ms`);
    } finally {
      await session.close();
    }
  });

  it('the deadline of the session bounds every exec, and a closed session kills what still runs', async (t) => {
    const s = spec({ deadlineMs: Date.now() + 800 });
    const session = await sandbox.openSession(s);
    const marker = s.runId;
    const result = await session.exec(`: ${marker}; sleep 30`, { timeoutMs: 60_000 });
    assert.equal(result.timedOut, true);
    const late = await session.exec('echo never');
    assert.equal(late.timedOut, true);
    assert.equal(late.durationMs, 0);

    const otherSpec = spec();
    const other = await sandbox.openSession(otherSpec);
    const pending = other.exec(`: ${otherSpec.runId}; sleep 30`);
    await new Promise((r) => setTimeout(r, 200));
    const closing = Date.now();
    await other.close();
    const killed = await pending;
    assert.equal(killed.signal, 'SIGKILL');
    assert.deepEqual(await processesWith(otherSpec.runId), []);
    await session.close();
    t.diagnostic(
      `session deadline 800 ms: exec ended after ${result.durationMs} ms; close() with a running exec: ${Date.now() - closing} ms`,
    );
  });
});

describe('the unisolated opt-out', () => {
  it('runs the same command as a plain child process in the work dir', async (t) => {
    const plain = new UnisolatedSandbox({ runsDir });
    assert.equal(plain.kind, 'unisolated');
    const s = spec({ env: { GREETING: 'hello from the env' }, bundle: { data: bundle, format: 'tar.gz' } });
    const session = await plain.openSession(s);
    try {
      assert.equal(session.workDir, join(runsDir, s.runId, 'work'));
      const result = await session.exec('node src/index.js', { stdin: JSON.stringify({ n: 42 }) });
      assert.equal(result.exitCode, 0, result.stderrTail);
      assert.deepEqual(JSON.parse(result.stdout), {
        got: { n: 42 },
        greeting: 'hello from the env',
        cwd: session.workDir,
      });
      const loop = await session.exec('sleep 100 & while :; do :; done', { timeoutMs: 500 });
      assert.equal(loop.timedOut, true);
      // It is not isolated: the host's files are right there.
      const leak = await session.exec(`cat ${join(dataDir, 'vault.key')}`);
      assert.equal(leak.stdout, 'TOP-SECRET-VAULT-KEY\n');
      t.diagnostic(
        `unisolated: same result; deadline kill after ${loop.durationMs} ms; and it can read the vault key (no isolation)`,
      );
    } finally {
      await session.close();
    }
    assert.equal(existsSync(join(runsDir, s.runId)), false);
    assert.equal((await readFile(join(dataDir, 'vault.key'), 'utf8')).length > 0, true);
  });
});
