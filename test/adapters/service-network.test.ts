import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, chown, copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { removeStaleRuns } from '../../functions/adapters/local/bwrap/run-dir.ts';
import { BwrapSandbox } from '../../functions/adapters/local/bwrap/sandboxes.ts';
import { execPublished, freePort } from '../../functions/adapters/local/listening-ports.ts';
import { pastaArgs, publishBindFailed } from '../../functions/adapters/local/pasta-network.ts';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { DEFAULT_SANDBOX_LIMITS, PublishPortTakenError } from '../../functions/ports/sandbox.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { processesWith } from '../helpers/process.ts';
import { fastNotifier } from '../helpers/schedules.ts';
import { publishAlwaysOn } from '../helpers/services.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * From the other side of the network boundary (docs/security.md): user code
 * with outbound network (an always-on service, an orchestrator's run) must not reach what the
 * host keeps on its loopback: the platform's own port, another service's gateway or app, a model
 * endpoint. Only the ports the operator lists (PLATFORM_SANDBOX_HOST_PORTS) are reachable, and
 * an orchestrator also reaches the platform's port, which it calls with its run credential.
 * Every address here is loopback.
 */

const execFileAsync = promisify(execFile);

/**
 * The attacker's service: before it listens, it tries the ports in TARGETS (name=port, ...) on
 * 127.0.0.1 and ::1, fetches ALLOWED, and scans every TCP port of its 127.0.0.1; then it serves
 * what it found.
 */
const PROBE_APP = `
import { createServer } from 'node:http';
import { connect } from 'node:net';
const tryPort = (host, port) => new Promise((resolve) => {
  const s = connect({ host, port });
  const end = (v) => { s.destroy(); resolve(v); };
  // A connect from an ephemeral port to that same port meets itself (TCP simultaneous open).
  s.once('connect', () => end(s.localPort === port ? 'self' : 'open'));
  s.once('error', (e) => end(e.code));
  s.setTimeout(2000, () => end('timeout'));
});
const found = { targets: {}, allowed: null, open: [] };
for (const pair of (process.env.TARGETS ?? '').split(',').filter(Boolean)) {
  const [name, port] = pair.split('=');
  found.targets[name + '@127.0.0.1'] = await tryPort('127.0.0.1', Number(port));
  found.targets[name + '@::1'] = await tryPort('::1', Number(port));
}
if (process.env.ALLOWED) {
  try { found.allowed = await (await fetch('http://127.0.0.1:' + process.env.ALLOWED + '/')).text(); }
  catch (e) { found.allowed = 'failed: ' + (e.cause?.code ?? e.message); }
}
const server = createServer((req, res) => res.end(JSON.stringify(found)));
await new Promise((r) => server.listen(Number(process.env.PORT), r));
if (process.env.SCAN) {
  for (let start = 1; start <= 65535; start += 2000) {
    const batch = [];
    for (let port = start; port < Math.min(start + 2000, 65536); port++)
      batch.push(tryPort('127.0.0.1', port).then((v) => { if (v === 'open') found.open.push(port); }));
    await Promise.all(batch);
  }
  found.open.sort((a, b) => a - b);
}
found.done = true;
`;

async function listenLoopback(body: string): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => res.end(body));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('a service cannot reach the host loopback (its own network namespace, through pasta)', () => {
  let p: TestPlatform;
  let owner: { key: string; ws: string };
  let allowed: { server: Server; port: number };
  let unlisted: { server: Server; port: number };
  const base = () => `/workspaces/${owner.ws}/services`;
  const deploy = async (name: string, env: Record<string, string>) => {
    const res = await p.request<{ id: string; url: string }>('POST', base(), {
      key: owner.key,
      body: { agent: 'netco/probe', name, env },
    });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };
  const probeResult = (url: string) =>
    waitFor(
      `${url} to answer`,
      async () => {
        const res = await fetch(url).catch(() => undefined);
        if (res?.status !== 200) return undefined;
        const body = (await res.json()) as {
          targets: Record<string, string>;
          allowed: string | null;
          open: number[];
          done?: boolean;
        };
        return body.done ? body : undefined;
      },
      60_000,
    );

  before(async () => {
    allowed = await listenLoopback('allowed-ok');
    unlisted = await listenLoopback('model-endpoint');
    p = await startTestPlatform(
      {
        PLATFORM_SERVICE_BACKOFF_MS: '50',
        PLATFORM_SERVICE_START_TIMEOUT_MS: '30000',
        PLATFORM_SANDBOX_HOST_PORTS: String(allowed.port),
      },
      'sqlite',
      { notifier: fastNotifier() },
    );
    const o = await createAccount(p.deps, { org: 'netco', tier: 'pro' });
    owner = { key: o.api_key, ws: o.workspace_id };
    await publishAlwaysOn(p, owner.key, {
      name: 'probe',
      description: 'Tries the host loopback from inside a service',
      files: { 'server.mjs': PROBE_APP },
    });
  });
  after(async () => {
    await p.close();
    allowed.server.close();
    unlisted.server.close();
  });

  it('reaches the listed loopback port, and not the platform, another service or an unlisted port', {
    timeout: 180_000,
  }, async (t) => {
    // The victim: another service on this host (its gateway, and its app's published port).
    const victim = await deploy('victim', {});
    await probeResult(victim.url).catch(async (err: Error) => {
      const st = await p.request('GET', `${base()}/${victim.id}`, { key: owner.key });
      throw new Error(`${err.message}; the service: ${st.text}`);
    });
    const platformPort = Number(new URL(p.url).port);
    const victimPort = Number(new URL(victim.url).port);
    const attacker = await deploy('attacker', {
      TARGETS: `platform=${platformPort},victim-gateway=${victimPort},model=${unlisted.port}`,
      ALLOWED: String(allowed.port),
      SCAN: '1',
    });
    const found = await probeResult(attacker.url);
    t.diagnostic(`from inside: ${JSON.stringify(found)}`);
    assert.equal(found.allowed, 'allowed-ok', 'the listed host port is reached at the same port');
    for (const [target, outcome] of Object.entries(found.targets)) {
      assert.notEqual(outcome, 'open', `${target} must not be reachable from a service`);
    }
    // Every port of its loopback: its own app's (3000, the spec's), the listed one, nothing else;
    // the victim's published app port, whatever it is, among the refused.
    assert.deepEqual(
      found.open,
      [3000, allowed.port].sort((a, b) => a - b),
    );
    // Two services both listen on 3000: each has its own network.
    const victimView = (await (await fetch(victim.url)).json()) as { done: boolean };
    assert.equal(victimView.done, true);

    for (const svc of [victim, attacker]) {
      const del = await p.request('DELETE', `${base()}/${svc.id}`, { key: owner.key });
      assert.equal(del.status, 204, del.text);
    }
    // Their network stacks go with them.
    await waitFor(
      'the pasta daemons to end',
      async () => ((await processesWith(join(p.dataDir, 'runs'))).length === 0 ? true : undefined),
      10_000,
    );
  });
});

describe('the sandbox adapter: egress sessions get their own network', () => {
  let runsDir: string;
  let allowed: { server: Server; port: number };
  let unlisted: { server: Server; port: number };
  const sandbox = () => new BwrapSandbox({ runsDir });
  const session = (runId: string, hostLoopbackPorts: number[]) =>
    sandbox().openSession({
      runId,
      workspaceId: 'ws',
      env: {},
      network: 'egress',
      hostLoopbackPorts,
      limits: DEFAULT_SANDBOX_LIMITS,
      deadlineMs: Date.now() + 60_000,
    });
  const TRY = (ports: number[]) =>
    `node -e "const net=require('net');Promise.all(${JSON.stringify(ports)}.map(p=>new Promise(r=>{const s=net.connect(p,'127.0.0.1');s.on('connect',()=>{s.destroy();r(p+':open')});s.on('error',e=>r(p+':'+e.code))}))).then(v=>console.log(v.join(' ')))"`;

  before(async () => {
    runsDir = join(await mkdtemp(join(tmpdir(), 'agenthost-netsb-')), 'runs');
    allowed = await listenLoopback('allowed');
    unlisted = await listenLoopback('unlisted');
  });
  after(async () => {
    allowed.server.close();
    unlisted.server.close();
    await rm(join(runsDir, '..'), { recursive: true, force: true });
  });

  it('an orchestrator-style run reaches only its listed host ports', async () => {
    const s = await session('net-listed', [allowed.port]);
    try {
      const r = await s.exec(TRY([allowed.port, unlisted.port]));
      assert.equal(r.exitCode, 0, r.stderrTail);
      assert.equal(r.stdout.trim(), `${allowed.port}:open ${unlisted.port}:ECONNREFUSED`);
      const none = await session('net-none-listed', []);
      try {
        const r2 = await none.exec(TRY([allowed.port, unlisted.port]));
        assert.equal(r2.stdout.trim(), `${allowed.port}:ECONNREFUSED ${unlisted.port}:ECONNREFUSED`);
      } finally {
        await none.close();
      }
    } finally {
      await s.close();
    }
  });

  it('pasta is given no gateway mapping, no UDP and no port but the listed and published ones', () => {
    const args = pastaArgs({
      asRoot: true,
      pid: 42,
      pidFile: '/x/pasta-42.pid',
      plan: { hostLoopbackPorts: [5432], publish: { hostPort: 40000, port: 3000 } },
    });
    const after = (flag: string) => args[args.indexOf(flag) + 1];
    assert.ok(args.includes('--no-map-gw'));
    assert.equal(after('--tcp-ns'), '5432');
    assert.equal(after('--tcp-ports'), '127.0.0.1/40000:3000');
    assert.equal(after('--udp-ports'), 'none');
    assert.equal(after('--udp-ns'), 'none');
    const bare = pastaArgs({ asRoot: false, pid: 42, pidFile: '/x', plan: { hostLoopbackPorts: [] } });
    assert.equal(bare[bare.indexOf('--tcp-ns') + 1], 'none');
    assert.equal(bare[bare.indexOf('--tcp-ports') + 1], 'none');
  });

  it('pasta’s words for a published port it could not bind are recognised, in its old and newer forms', () => {
    // passt of 2023 (Debian 12's, this machine's) and later versions word it differently.
    assert.equal(publishBindFailed("Failed to bind any port for '-t 127.0.0.1/40000:3000', exiting"), true);
    assert.equal(
      publishBindFailed(
        "Failed to bind port 40000 (Address in use) for option '-t 127.0.0.1/40000:3000', exiting",
      ),
      true,
    );
    // The host loopback ports mapped in (-T) bind inside the namespace: not a taken published port.
    assert.equal(publishBindFailed("Failed to bind any port for '-T 5432', exiting"), false);
    assert.equal(publishBindFailed('Failed to open tun socket in namespace'), false);
  });

  it('a network pasta cannot set up refuses the exec at once, and leaves nothing running', async () => {
    const fake = join(runsDir, '..', 'broken-pasta');
    await writeFile(fake, '#!/bin/sh\necho "Failed to open tun socket in namespace" >&2\nexit 1\n', {
      mode: 0o755,
    });
    const s = await new BwrapSandbox({ runsDir, pastaPath: fake }).openSession({
      runId: 'net-broken',
      workspaceId: 'ws',
      env: { BROKEN_NET_MARK: 'net-broken-mark' },
      network: 'egress',
      limits: DEFAULT_SANDBOX_LIMITS,
      deadlineMs: Date.now() + 60_000,
    });
    const started = Date.now();
    try {
      await assert.rejects(s.exec('echo ran; sleep 30'), (err: Error) => {
        assert.equal(err.name, 'SandboxUnavailableError');
        assert.match(err.message, /pasta could not give the sandbox its network: Failed to open tun socket/);
        return true;
      });
      assert.ok(Date.now() - started < 10_000, 'refused at once, not at the deadline');
    } finally {
      await s.close();
    }
    const left = [];
    for (const pid of await readdir('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      const env = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
      if (env.includes('net-broken-mark')) left.push(pid);
    }
    assert.deepEqual(left, []);
  });

  it('holds the same way when the platform runs as an unprivileged user', { timeout: 60_000 }, async () => {
    // As root (CI), the session is opened by a process running as nobody: the unprivileged path,
    // where bwrap would nest the command's user namespace (see bwrapArgs). That process gets a
    // bundle of the helper and a copy of node in a directory it can read, wherever the checkout is.
    const dir = await mkdtemp(join(tmpdir(), 'agenthost-unpriv-'));
    try {
      await build({
        entryPoints: [join(import.meta.dirname, '..', 'helpers', 'egress-session.ts')],
        bundle: true,
        platform: 'node',
        format: 'esm',
        outfile: join(dir, 'egress-session.mjs'),
        // CommonJS dependencies (tar, yauzl) require node's modules.
        banner: {
          js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
        },
        logLevel: 'error',
      });
      // The spawner's program beside the bundle, as beside its source (spawner.ts).
      await build({
        entryPoints: [
          join(import.meta.dirname, '..', '..', 'functions/adapters/local/bwrap/spawner-process.ts'),
        ],
        bundle: true,
        platform: 'node',
        format: 'esm',
        outfile: join(dir, 'spawner-process.mjs'),
        logLevel: 'error',
      });
      await copyFile(process.execPath, join(dir, 'node'));
      await chmod(join(dir, 'node'), 0o755);
      await chmod(dir, 0o755);
      const runs = join(dir, 'runs');
      await mkdir(runs, { mode: 0o700 });
      const asRoot = process.getuid?.() === 0;
      if (asRoot) await chown(runs, 65534, 65534);
      const argv = [join(dir, 'node'), join(dir, 'egress-session.mjs'), runs, String(allowed.port)];
      argv.push(`${allowed.port},${unlisted.port}`);
      const command = asRoot
        ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...argv]
        : argv;
      const { stdout } = await execFileAsync(command[0]!, command.slice(1), { cwd: dir, timeout: 50_000 });
      const out = JSON.parse(stdout.trim().split('\n').pop()!) as {
        platformUid: number;
        exitCode: number;
        stdout: string;
        stderrTail: string;
      };
      assert.notEqual(out.platformUid, 0);
      assert.equal(out.exitCode, 0, out.stderrTail);
      const inside = JSON.parse(out.stdout) as { uid: number; ports: Record<string, string> };
      assert.deepEqual(inside, {
        uid: 1000,
        ports: { [allowed.port]: 'open', [unlisted.port]: 'ECONNREFUSED' },
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a published port taken since it was chosen refuses the exec before it runs; execPublished chooses another', async () => {
    // The race a free port runs between its check and pasta's bind, made certain: a listener holds it.
    const holder = await listenLoopback('the holder');
    const s = await session('net-taken', []);
    try {
      await assert.rejects(
        s.exec('touch ran', { publish: { hostPort: holder.port, port: 3000 } }),
        (err: Error) => err instanceof PublishPortTakenError,
      );
      assert.equal((await s.listFiles('.')).includes('ran'), false, 'the command never ran');
      const tried: number[] = [];
      const app = `node -e "require('http').createServer((q,r)=>r.end('app',()=>process.exit(0))).listen(3000)"`;
      const run = execPublished(
        holder.port,
        () => freePort('127.0.0.1'),
        (hostPort) => {
          tried.push(hostPort);
          return s.exec(app, { publish: { hostPort, port: 3000 } });
        },
      );
      const answer = await waitFor('the app on the second port', async () => {
        const port = tried[1];
        if (port === undefined) return undefined;
        const res = await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined);
        return res?.ok ? await res.text() : undefined;
      });
      assert.equal(answer, 'app');
      assert.equal((await run).exitCode, 0);
      assert.equal(tried[0], holder.port);
      assert.equal(tried.length, 2);
    } finally {
      await s.close();
      holder.server.close();
    }
  });

  it('an exec aborted while pasta attaches leaves nothing running: the command never starts', async () => {
    // A pasta that takes a second to attach: the abort lands while the sandbox waits on fd 7.
    const slow = join(runsDir, '..', 'slow-pasta');
    await writeFile(slow, '#!/bin/sh\nsleep 1\nexec /usr/bin/pasta "$@"\n', { mode: 0o755 });
    const s = await new BwrapSandbox({ runsDir, pastaPath: slow }).openSession({
      runId: 'net-aborted',
      workspaceId: 'ws',
      env: { ABORT_NET_MARK: 'abort-net-mark' },
      network: 'egress',
      limits: DEFAULT_SANDBOX_LIMITS,
      deadlineMs: Date.now() + 60_000,
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    const result = await s
      .exec('sleep 30', { signal: controller.signal })
      .catch((err: Error) => ({ rejected: err.name }));
    assert.ok(Date.now() - started < 10_000, `ended promptly: ${JSON.stringify(result)}`);
    const running = async () => {
      const left: string[] = [];
      for (const pid of await readdir('/proc')) {
        if (!/^\d+$/.test(pid)) continue;
        const env = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
        if (env.includes('abort-net-mark')) left.push(pid);
      }
      return left;
    };
    const pasta = () => processesWith(join(runsDir, '.pasta', 'net-aborted'));
    // Within 5 s, polled: the test ends as soon as they are gone.
    await waitFor(
      'the aborted exec’s processes and its pasta to end',
      async () => ((await running()).length + (await pasta()).length ? undefined : true),
      5_000,
    ).catch(() => undefined);
    const left = await running();
    await s.close();
    assert.deepEqual(left, [], 'no process of the aborted exec runs on');
    assert.deepEqual(await pasta(), [], 'nor its pasta');
  });

  it('a platform process that exits with an egress exec running takes its pasta with it', async () => {
    const { stdout } = await execFileAsync(
      process.execPath,
      [join(import.meta.dirname, '..', 'helpers', 'egress-exit.ts'), runsDir],
      { timeout: 30_000 },
    );
    assert.equal(stdout.trim(), 'running');
    await waitFor(
      'the exited process’s pasta to end',
      async () => ((await processesWith(`${runsDir}/.pasta/exit-`)).length === 0 ? true : undefined),
      5_000,
    );
  });

  it('removeStaleRuns ends the pasta daemons a crashed platform left behind', async () => {
    const s = await sandbox().openSession({
      runId: 'net-stale',
      workspaceId: 'ws',
      env: { STALE_NET_MARK: 'stale-net-mark' },
      network: 'egress',
      limits: DEFAULT_SANDBOX_LIMITS,
      deadlineMs: Date.now() + 60_000,
    });
    const controller = new AbortController();
    const exec = s.exec('sleep 30', { signal: controller.signal });
    // onSpawn fires when bubblewrap starts, before it has set up the namespace; ending pasta then
    // fails the setup instead of modelling a crash. Wait for the user's command itself.
    await waitFor(
      'the command to run inside the sandbox',
      async () => {
        for (const pid of await readdir('/proc')) {
          if (!/^\d+$/.test(pid)) continue;
          const comm = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim();
          if (comm !== 'sleep') continue;
          const env = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
          if (env.includes('stale-net-mark')) return true;
        }
        return undefined;
      },
      20_000,
    );
    assert.equal(
      (await processesWith(join(runsDir, '.pasta', 'net-stale'))).length,
      1,
      'one pasta for the exec',
    );
    // As at the next start after a crash: the run directory is stale, its pasta still runs.
    await removeStaleRuns(runsDir);
    await waitFor(
      'the stale pasta to end',
      async () =>
        (await processesWith(join(runsDir, '.pasta', 'net-stale'))).length === 0 ? true : undefined,
      5_000,
    );
    controller.abort();
    await exec;
    await s.close().catch(() => undefined);
  });
});
