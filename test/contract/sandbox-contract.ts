/**
 * The Sandbox port's contract (functions/ports/sandbox.ts), one suite run against every adapter
 * (test/contract/sandbox-contract.test.ts: bubblewrap, the unisolated opt-out, and the ECS sandbox against
 * the emulated deployment's ECS and S3 stand-ins). Where an adapter legitimately differs, the
 * fixture states the capability (documented in docs/sandbox.md and docs/sandbox-aws.md) and the
 * suite asserts that behaviour instead: nothing is skipped.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import {
  DEFAULT_SANDBOX_LIMITS,
  type Sandbox,
  type SandboxLimits,
  type SandboxSession,
  SandboxUnavailableError,
  type SessionSpec,
} from '../../functions/ports/sandbox.ts';
import { tarGzOf } from '../helpers/bundles.ts';

export interface SandboxCapabilities {
  kind: Sandbox['kind'];
  /** The working directory as commands see it: a fixed path, or (unisolated) the run's host path. */
  workDir: '/work' | 'host-path';
  /** Variables every exec gets besides the session's env (the adapter's documented baseline). */
  baseEnv: string[];
  /**
   * `none` has no way to the host: true for bubblewrap (only `lo`) and ECS (a VPC with no way out;
   * here a task reaches only the S3 stand-in); false for unisolated, which shares the host network.
   */
  noneIsolatesNetwork: boolean;
  /**
   * `egress`: `own` network reaching only the listed host ports (bubblewrap with pasta); the `host`
   * network (unisolated); or `refused` with SandboxUnavailableError (ECS).
   */
  egress: 'own' | 'host' | 'refused';
  /**
   * An abort: `kills-command` (local: the command is killed, `timedOut` false, the session goes
   * on) or `stops-session` (ECS: the task is stopped as at a deadline, reported `timedOut`, and
   * the session cannot run anything more).
   */
  abort: 'kills-command' | 'stops-session';
}

export interface SandboxFixture {
  sandbox: Sandbox;
  capabilities: SandboxCapabilities;
  /**
   * What of a run is there (its directory, its task, its objects): empty when all is gone. After
   * close, the fixture may wait for what ends asynchronously (an ECS task) to end.
   */
  leftovers(runId: string, options: { afterClose: boolean }): Promise<string[]>;
  close(): Promise<void>;
}

let counter = 0;
/** Run ids valid for every adapter (ECS: letters, digits, `_` and `-`, at most 64). */
const runId = () => `c${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;

export function sessionSpec(
  overrides: Omit<Partial<SessionSpec>, 'limits'> & { limits?: Partial<SandboxLimits> } = {},
): SessionSpec {
  const { limits, ...rest } = overrides;
  return {
    runId: runId(),
    workspaceId: 'ws-contract',
    env: {},
    network: 'none',
    deadlineMs: Date.now() + 60_000,
    ...rest,
    limits: { ...DEFAULT_SANDBOX_LIMITS, ...limits },
  };
}

/** A loopback TCP server that counts the connections it accepted. */
async function countingServer(): Promise<{ port: number; accepted: () => number; server: Server }> {
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    // The probe hangs up at once; a reset is not the test's failure.
    socket.on('error', () => undefined);
    socket.end('hello from the host\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  return { port: address.port, accepted: () => accepted, server };
}

/**
 * A shell command that connects to 127.0.0.1:`port` and says whether it reached the counting
 * server there: "connected" once the server's greeting is read, so the host's end accepted it.
 * A connect alone can succeed inside the sandbox's own network before its helper (pasta) has
 * opened the forwarded connection to the host, and a probe that hung up at once could leave the
 * host with no connection at all.
 */
const connectTo = (port: number) =>
  `if bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port} && read -r -t 10 line <&3 && [ "$line" = "hello from the host" ]' 2>/dev/null; then echo connected; else echo refused; fi`;

/** Names of the variables in `env -0` output. */
const envNames = (stdout: string) =>
  stdout
    .split('\0')
    .filter(Boolean)
    .map((entry) => entry.slice(0, entry.indexOf('=')));

/** Variables the shell itself sets. */
const SHELL_ENV = ['PWD', 'OLDPWD', 'SHLVL', '_'];
/** Set in the platform's (this test's) process only: no exec may see it. */
const HOST_ONLY_VARIABLE = 'AGENTHOST_CONTRACT_HOST_ONLY';

const isPathError = (err: unknown) => (err as Error).name === 'SandboxPathError';

export function sandboxContract(label: string, open: () => Promise<SandboxFixture>): void {
  describe(`Sandbox contract: ${label}`, () => {
    let fx: SandboxFixture;
    let bundle: Buffer;
    const sessions: SandboxSession[] = [];
    const openSession = async (spec: SessionSpec) => {
      const session = await fx.sandbox.openSession(spec);
      sessions.push(session);
      return session;
    };

    before(async () => {
      process.env[HOST_ONLY_VARIABLE] = 'host-only-value';
      fx = await open();
      bundle = await tarGzOf({ 'bin/hello.sh': 'echo "hello from the bundle"\n' });
    });
    // Each test's sessions end with it, so a test sees only its own runs.
    afterEach(async () => {
      for (const s of sessions.splice(0)) await s.close().catch(() => undefined);
    });
    after(async () => {
      await fx.close();
      delete process.env[HOST_ONLY_VARIABLE];
    });

    it(`states its kind (${label})`, () => {
      assert.equal(fx.sandbox.kind, fx.capabilities.kind);
      assert.equal(fx.sandbox.ownNetwork, fx.capabilities.egress === 'own');
    });

    it('unpacks the bundle and places the files in the working directory, where commands run', async () => {
      const session = await openSession(
        sessionSpec({
          bundle: { data: bundle, format: 'tar.gz' },
          files: [{ path: 'input/data.txt', data: Buffer.from('the call file') }],
        }),
      );
      if (fx.capabilities.workDir === '/work') assert.equal(session.workDir, '/work');
      else assert.ok(session.workDir.startsWith('/') && session.workDir !== '/work', session.workDir);
      const r = await session.exec('pwd; cat input/data.txt; echo; sh bin/hello.sh');
      assert.equal(r.exitCode, 0, r.stderrTail);
      assert.equal(r.stdout, `${session.workDir}\nthe call file\nhello from the bundle\n`);
      assert.deepEqual(await session.listFiles(), ['bin/hello.sh', 'input/data.txt']);
    });

    it('exec: stdin in, stdout, the stderr tail and the exit status out', async () => {
      const session = await openSession(sessionSpec());
      const r = await session.exec('cat; echo; echo "oops on stderr" >&2; exit 3', { stdin: 'piped in' });
      assert.deepEqual(
        {
          exitCode: r.exitCode,
          signal: r.signal,
          stdout: r.stdout,
          timedOut: r.timedOut,
          cut: r.stdoutTruncated,
        },
        { exitCode: 3, signal: null, stdout: 'piped in\n', timedOut: false, cut: false },
      );
      assert.match(r.stderrTail, /oops on stderr/);
      // Files persist between the execs of a session.
      await session.exec('echo kept > kept.txt');
      assert.equal((await session.exec('cat kept.txt')).stdout, 'kept\n');
    });

    // A spawner that released a child's stdin before it was written out would cut stdin and the
    // set-up data (bwrap's options: the env, secrets included) at about 143 KiB.
    it('stdin of 5 MB and 64 KiB env values arrive whole', async () => {
      const big = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
      const env = {
        SECRET_A: big(64 * 1024 - 1, 'a1'),
        SECRET_B: big(64 * 1024 - 1, 'b2'),
        SECRET_C: big(64 * 1024 - 1, 'c3'),
      };
      const session = await openSession(sessionSpec({ env }));
      const input = JSON.stringify({ text: big(5 * 1024 * 1024, 'stdin-0123456789') });
      const r = await session.exec(
        'sha256sum | cut -d" " -f1; printf %s "$SECRET_A$SECRET_B$SECRET_C" | sha256sum | cut -d" " -f1',
        { stdin: input },
      );
      assert.equal(r.exitCode, 0, r.stderrTail);
      const sha = (text: string) => createHash('sha256').update(text).digest('hex');
      assert.equal(r.stdout, `${sha(input)}\n${sha(env.SECRET_A + env.SECRET_B + env.SECRET_C)}\n`);
    });

    it('stdout past outputBytes is cut and flagged; the command still succeeds', async () => {
      const session = await openSession(sessionSpec({ limits: { outputBytes: 1000 } }));
      const r = await session.exec(`head -c 5000 /dev/zero | tr '\\0' a`);
      assert.equal(r.exitCode, 0, r.stderrTail);
      assert.equal(r.stdout, 'a'.repeat(1000));
      assert.equal(r.stdoutTruncated, true);
    });

    it('limits: CPU seconds end a busy loop; a file cannot grow past diskBytes', async () => {
      const diskBytes = 1024 * 1024;
      const session = await openSession(sessionSpec({ limits: { cpuSeconds: 1, diskBytes } }));
      const busy = await session.exec('while :; do :; done', { timeoutMs: 30_000 });
      assert.equal(busy.timedOut, false, 'ended by the CPU limit, not the timeout');
      assert.equal(busy.exitCode, null);
      assert.ok(['SIGXCPU', 'SIGKILL'].includes(String(busy.signal)), String(busy.signal));
      const big = await session.exec(`head -c ${2 * diskBytes} /dev/zero > big.bin`);
      assert.notEqual(big.exitCode, 0, 'the write past the limit fails');
      const size = await session.exec('wc -c < big.bin');
      assert.ok(Number(size.stdout.trim()) <= diskBytes, size.stdout);
    });

    it('timeoutMs: the command is killed and reported as timed out; the session goes on', async () => {
      const session = await openSession(sessionSpec());
      // The session is up first: on ECS the first command starts the task, which under a loaded CI
      // machine can take longer than the 2 s given to the command, and the case is the command's
      // own timeout, not the task's start.
      assert.equal((await session.exec('echo up')).stdout, 'up\n');
      const r = await session.exec('sleep 60', { timeoutMs: 2000 });
      assert.deepEqual(
        { exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut },
        { exitCode: null, signal: 'SIGKILL', timedOut: true },
      );
      assert.equal((await session.exec('echo after')).stdout, 'after\n');
    });

    it('abort: the command is killed; the session goes on, or (ECS) its task is stopped as documented', async () => {
      const session = await openSession(sessionSpec());
      assert.equal((await session.exec('echo up')).stdout, 'up\n');
      const controller = new AbortController();
      const running = session.exec('sleep 60', { signal: controller.signal });
      // Whether the abort lands before or after the command starts, the outcome is the same.
      setTimeout(() => controller.abort(), 300);
      const r = await running;
      assert.equal(r.exitCode, null);
      assert.equal(r.signal, 'SIGKILL');
      if (fx.capabilities.abort === 'kills-command') {
        assert.equal(r.timedOut, false, 'an abort is not a timeout');
        assert.equal((await session.exec('echo after')).stdout, 'after\n');
      } else {
        assert.equal(r.timedOut, true, 'the task is stopped as at a deadline');
        await assert.rejects(session.exec('echo after'), SandboxUnavailableError);
      }
      // Already aborted: nothing runs.
      const fresh = await openSession(sessionSpec());
      const skipped = await fresh.exec('echo ran > ran.txt', { signal: AbortSignal.abort() });
      assert.equal(skipped.exitCode, null);
      assert.equal(skipped.stdout, '');
    });

    it('readFile, writeFile and listFiles: bytes round-trip, commands see the files and vice versa', async () => {
      const session = await openSession(sessionSpec());
      const bytes = Buffer.from([0, 1, 2, 127, 128, 255, 10, 39]);
      await session.writeFile('out/deep/bytes.bin', bytes);
      await session.writeFile("notes/it's.txt", 'text written by the platform');
      assert.deepEqual(await session.readFile('out/deep/bytes.bin'), bytes);
      const seen = await session.exec(`cat "notes/it's.txt"; echo; od -An -tu1 out/deep/bytes.bin`);
      assert.equal(seen.stdout.split('\n')[0], 'text written by the platform');
      assert.deepEqual(seen.stdout.split('\n')[1]?.trim().split(/\s+/).map(Number), [...bytes]);
      await session.exec('mkdir -p made && printf "by the command" > made/by-exec.txt');
      assert.equal(String(await session.readFile('made/by-exec.txt')), 'by the command');
      assert.deepEqual(await session.listFiles(), [
        'made/by-exec.txt',
        "notes/it's.txt",
        'out/deep/bytes.bin',
      ]);
      assert.deepEqual(await session.listFiles('out'), ['out/deep/bytes.bin']);
      await assert.rejects(session.readFile('missing.txt'));
    });

    it('refuses paths outside the working directory and links, for reads, writes and listings', async () => {
      const session = await openSession(sessionSpec());
      await session.exec('ln -s /etc/passwd link; ln -s / rootlink; echo inside > inside.txt');
      for (const path of ['../escape.txt', '/etc/passwd', 'a/../../escape.txt', '..', 'link']) {
        await assert.rejects(session.readFile(path), isPathError, `readFile ${path}`);
        await assert.rejects(session.writeFile(path, 'x'), isPathError, `writeFile ${path}`);
      }
      for (const path of ['../', '/etc', 'a/../..']) {
        await assert.rejects(session.listFiles(path), isPathError, `listFiles ${path}`);
      }
      // Nothing was written through the link, and the listing does not follow links.
      assert.deepEqual(await session.listFiles(), ['inside.txt']);
      assert.equal((await session.exec('cat inside.txt')).stdout, 'inside\n');
    });

    it("each exec's environment is the session's env and the documented baseline, nothing of the host's", async () => {
      const env = { GREETING: 'hello there', API_TOKEN: 'tok-8c1d2e3f' };
      const session = await openSession(sessionSpec({ env }));
      const r = await session.exec('env -0');
      assert.equal(r.exitCode, 0, r.stderrTail);
      const names = envNames(r.stdout);
      const allowed = new Set([...Object.keys(env), ...fx.capabilities.baseEnv, ...SHELL_ENV]);
      assert.deepEqual(
        names.filter((n) => !allowed.has(n)),
        [],
        `unexpected variables: ${names.join(', ')}`,
      );
      assert.ok(!names.includes(HOST_ONLY_VARIABLE));
      assert.equal(
        (await session.exec('printf %s "$GREETING|$API_TOKEN"')).stdout,
        'hello there|tok-8c1d2e3f',
      );
      // Another session has its own env only.
      const other = await openSession(sessionSpec({ env: { OTHER: '1' } }));
      assert.equal((await other.exec('[ -z "$API_TOKEN" ] && echo unset')).stdout, 'unset\n');
    });

    it("network 'none': the host's loopback is out of reach (or, where documented, shared)", async () => {
      const host = await countingServer();
      try {
        const session = await openSession(sessionSpec({ network: 'none' }));
        const r = await session.exec(connectTo(host.port), { timeoutMs: 20_000 });
        if (fx.capabilities.noneIsolatesNetwork) {
          assert.equal(r.stdout, 'refused\n', r.stderrTail);
          assert.equal(host.accepted(), 0);
        } else {
          // Unisolated: the command shares the host's network (docs/sandbox.md).
          assert.equal(r.stdout, 'connected\n', r.stderrTail);
        }
      } finally {
        host.server.close();
      }
    });

    it("network 'egress': only the listed host ports (own network), the host's network, or refused, as stated", async () => {
      const listed = await countingServer();
      const unlisted = await countingServer();
      try {
        const spec = sessionSpec({ network: 'egress', hostLoopbackPorts: [listed.port] });
        if (fx.capabilities.egress === 'refused') {
          await assert.rejects(fx.sandbox.openSession(spec), SandboxUnavailableError);
          return;
        }
        const session = await openSession(spec);
        const r = await session.exec(`${connectTo(listed.port)}; ${connectTo(unlisted.port)}`, {
          timeoutMs: 20_000,
        });
        const expected = fx.capabilities.egress === 'own' ? 'connected\nrefused\n' : 'connected\nconnected\n';
        assert.equal(r.stdout, expected, r.stderrTail);
        // The greeting the command read was written after the accept (connectTo).
        assert.equal(listed.accepted(), 1);
      } finally {
        listed.server.close();
        unlisted.server.close();
      }
    });

    it('a command marked last runs as any other; then every command and file operation is refused, and close cleans up', async () => {
      const spec = sessionSpec({ files: [{ path: 'input/data.txt', data: Buffer.from('x') }] });
      const session = await openSession(spec);
      const r = await session.exec('cat; cat input/data.txt', { stdin: 'in ', last: true });
      assert.equal(r.exitCode, 0, r.stderrTail);
      assert.equal(r.stdout, 'in x');
      await assert.rejects(session.exec('true'), /last command/);
      await assert.rejects(session.readFile('input/data.txt'), /last command/);
      await assert.rejects(session.writeFile('more.txt', 'y'), /last command/);
      await assert.rejects(session.listFiles(), /last command/);
      await session.close();
      assert.deepEqual(await fx.leftovers(spec.runId, { afterClose: true }), []);
    });

    it('close() kills what runs, removes everything of the run, and ends the session', async () => {
      const spec = sessionSpec({
        bundle: { data: bundle, format: 'tar.gz' },
        files: [{ path: 'input/data.txt', data: Buffer.from('x') }],
      });
      const session = await fx.sandbox.openSession(spec);
      await session.writeFile('written.txt', 'y');
      assert.equal((await session.exec('cat written.txt')).stdout, 'y');
      // The probe sees the run while it is open (so its empty answer below means something).
      assert.notDeepEqual(
        await fx.leftovers(spec.runId, { afterClose: false }),
        [],
        'the open run is visible to leftovers()',
      );
      const running = session.exec('sleep 60');
      const closed = new Promise<void>((resolve, reject) =>
        setTimeout(() => session.close().then(resolve, reject), 300),
      );
      // A second close while the first runs resolves only when the clean-up is done.
      const closedAgain = new Promise<void>((resolve, reject) =>
        setTimeout(() => session.close().then(resolve, reject), 350),
      );
      const r = await running.catch((err: Error) => err);
      if (!(r instanceof Error)) assert.equal(r.exitCode, null, 'the running command was killed');
      await closedAgain;
      assert.deepEqual(await fx.leftovers(spec.runId, { afterClose: true }), []);
      await closed;
      // Once closed, every operation is a rejected promise (never a synchronous throw).
      await assert.rejects(session.exec('true'));
      await assert.rejects(session.readFile('written.txt'));
      await assert.rejects(session.writeFile('again.txt', 'z'));
      await assert.rejects(session.listFiles());
    });
  });
}
