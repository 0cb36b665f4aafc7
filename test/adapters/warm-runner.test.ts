import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import {
  type ExecCommand,
  type PoolManifest,
  RUNNER_BOOTSTRAP,
  type RunManifest,
  type RunnerClaim,
  SANDBOX_MANIFEST_ENV,
  SANDBOX_RUN_UID,
} from '../../functions/containers/sandbox-protocol.ts';
import { buildContainerProgram } from '../../lib/container-programs.ts';
import { type PresignedObjectStore, startPresignedObjectStore } from '../helpers/presigned-object-store.ts';

/**
 * A warm runner (functions/containers/warm-runner.ts), the bootstrap and the
 * bundled runner as a task runs them, against a loopback S3 stand-in: it serves the runs of the
 * one workspace and agent version its first claim binds it to, each after a reset, so a run sees
 * no file and no process an earlier run left; it refuses a claim of any other pair, and exits when
 * idle. Tried from the other side: the first run leaves what it can (a file in the working
 * directory and in /tmp, a process in a session of its own) and the second looks for it.
 */

const RUNNER = buildContainerProgram('sandbox-runner');
const asRoot = process.getuid?.() === 0;

describe('a warm runner against a loopback S3 stand-in', () => {
  let store: PresignedObjectStore;
  let objects: Map<string, Buffer>;
  let base = '';
  const root = mkdtempSync(join(tmpdir(), 'agenthost-warm-'));
  // The run's user (the runner drops root) reaches its directories.
  chmodSync(root, 0o755);

  before(async () => {
    store = await startPresignedObjectStore();
    objects = store.objects;
    base = store.base;
  });
  after(() => {
    store.close();
    rmSync(root, { recursive: true, force: true });
  });

  const limits = { cpuSeconds: 30, processes: 256, outputBytes: 4096, diskBytes: 10 * 1024 * 1024 };

  /** Starts a warm runner `name` whose claim k is read from pool/<name>/claim-<k>.json. */
  function startWarmRunner(
    name: string,
    options: { idleMs?: number; slots?: number; hostNamespace?: boolean } = {},
  ) {
    const scratch = join(root, `${name}-scratch`);
    mkdirSync(scratch, { recursive: true });
    chmodSync(scratch, 0o1777);
    const manifest: PoolManifest = {
      v: 3,
      runnerId: name,
      runner: { url: `${base}/inputs/${name}/runner.cjs` },
      claims: Array.from({ length: options.slots ?? 3 }, (_, i) => ({
        url: `${base}/pool/${name}/claim-${i + 1}.json`,
      })),
      idleMs: options.idleMs ?? 20_000,
      expiresAtMs: Date.now() + 60_000,
      pollMs: [5, 20],
      scratchDirs: [scratch],
    };
    objects.set(`inputs/${name}/runner.cjs`, Buffer.from(RUNNER));
    objects.set(`inputs/${name}/pool.json`, Buffer.from(JSON.stringify(manifest)));
    // As root, the runner starts in a PID namespace of its own, as a Fargate container's is (its
    // /proc shows that namespace alone); `hostNamespace` starts it beside the host's processes.
    const ownNamespace = asRoot && !options.hostNamespace;
    const argv = [process.execPath, '-e', RUNNER_BOOTSTRAP];
    const [file, ...args] = ownNamespace
      ? ['unshare', '--pid', '--fork', '--kill-child', '--mount-proc', ...argv]
      : argv;
    const child = spawn(file as string, args, {
      env: { [SANDBOX_MANIFEST_ENV]: `${base}/inputs/${name}/pool.json`, PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let logs = '';
    child.stdout.on('data', (d: Buffer) => {
      logs += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      logs += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    return { child, exited, logs: () => logs, scratch };
  }

  /** Claims runner `name`'s slot k for one run of `binding` whose commands are `commands`, then stop. */
  function claim(
    name: string,
    k: number,
    runId: string,
    binding: RunnerClaim['binding'],
    scratch: string,
    commands: string[],
  ) {
    const run: RunManifest = {
      v: 2,
      runId,
      workDir: join(root, `${name}-work`),
      env: { TMPDIR: scratch },
      bundle: null,
      files: [],
      execs: Array.from({ length: commands.length + 1 }, (_, i) => ({
        commandUrl: `${base}/inputs/${runId}/exec-${i + 1}.json`,
        resultUrl: `${base}/results/${runId}/exec-${i + 1}.json`,
      })),
      pollMs: [5, 20],
      deadlineMs: Date.now() + 20_000,
      runner: { url: `${base}/inputs/${name}/runner.cjs` },
      limits,
    };
    commands.forEach((command, i) => {
      const c: ExecCommand = { v: 2, command, stdin: '', killAtMs: Date.now() + 15_000 };
      objects.set(`inputs/${runId}/exec-${i + 1}.json`, Buffer.from(JSON.stringify(c)));
    });
    const stop: ExecCommand = { v: 2, stop: true };
    objects.set(`inputs/${runId}/exec-${commands.length + 1}.json`, Buffer.from(JSON.stringify(stop)));
    const body: RunnerClaim = { v: 3, binding, run };
    objects.set(`pool/${name}/claim-${k}.json`, Buffer.from(JSON.stringify(body)));
  }

  async function resultOf(runId: string, n: number, logs: () => string): Promise<Record<string, unknown>> {
    const key = `results/${runId}/exec-${n}.json`;
    for (let i = 0; i < 400 && !objects.has(key); i++) await delay(25);
    const stored = objects.get(key);
    assert.ok(stored, `no result ${n} of ${runId}; runner logs: ${logs()}`);
    return JSON.parse(String(stored));
  }

  const mine = { workspaceId: 'ws_alpha', agentVersion: 'agt_1@v1' };

  test('serves runs of its binding, each after a reset: no file, no /tmp file, no process an earlier run left', async () => {
    const runner = startWarmRunner('reuse');
    let leftPid = 0;
    try {
      claim('reuse', 1, 'reuse-r1', mine, runner.scratch, [
        // A file in the working directory and in /tmp, and a process in a session of its own
        // (outside the command's process group, which the runner kills after every command).
        'echo secret-1 > left.txt; echo secret-1 > "$TMPDIR/t.txt"; setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $!',
      ]);
      const first = await resultOf('reuse-r1', 1, runner.logs);
      assert.equal(first.exitCode, 0, String(first.stderrTail));
      leftPid = Number(String(first.stdout).trim());
      assert.ok(leftPid > 0, String(first.stdout));

      // Killed, a process may stay a zombie until the task's init reaps it: no code, no files.
      claim('reuse', 2, 'reuse-r2', mine, runner.scratch, [
        `ls -A; echo "--"; ls -A "$TMPDIR"; echo "--"; s=$(sed -n 's/^State:[[:space:]]*\\(.\\).*/\\1/p' /proc/${leftPid}/status 2>/dev/null); if [ -z "$s" ] || [ "$s" = Z ]; then echo gone; else echo alive; fi`,
      ]);
      const second = await resultOf('reuse-r2', 1, runner.logs);
      assert.equal(second.exitCode, 0, String(second.stderrTail));
      if (asRoot) {
        assert.equal(second.stdout, '--\n--\ngone\n', 'nothing of the first run is left');
      } else {
        // Started on a host by a user (no PID namespace of its own): files go, escaped processes stay.
        assert.equal(second.stdout, '--\n--\nalive\n');
        assert.match(runner.logs(), /escaped processes are left alone/);
      }
      assert.match(runner.logs(), /"msg":"reset"/);
      assert.ok(!runner.logs().includes('secret-1'), 'the runner logs no output');
    } finally {
      if (!asRoot && leftPid > 0) process.kill(leftPid, 'SIGKILL');
      runner.child.kill('SIGKILL');
    }
  });

  test('on a host, the reset kills no process of the run user that is not its own: a bystander of uid 1000 lives on', async () => {
    // uid 1000 is the first account of most machines: a person's session, or another test's
    // sandboxed commands. Not root, the bystander is of the test's own user, which commands share.
    const bystander = spawn('sleep', ['300'], {
      stdio: 'ignore',
      detached: true,
      ...(asRoot ? { uid: SANDBOX_RUN_UID, gid: SANDBOX_RUN_UID } : {}),
    });
    const runner = startWarmRunner('host', { hostNamespace: true });
    let leftPid = 0;
    try {
      claim('host', 1, 'host-r1', mine, runner.scratch, [
        'setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $!',
      ]);
      const first = await resultOf('host-r1', 1, runner.logs);
      leftPid = Number(String(first.stdout).trim());
      assert.ok(leftPid > 0, String(first.stdout));
      claim('host', 2, 'host-r2', mine, runner.scratch, ['echo second']);
      assert.equal((await resultOf('host-r2', 1, runner.logs)).stdout, 'second\n');
      assert.match(runner.logs(), /escaped processes are left alone/);
      const state = (pid: number) => /^State:\s*(\S)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      assert.equal(state(bystander.pid as number), 'S', 'the bystander is alive');
    } finally {
      bystander.kill('SIGKILL');
      if (leftPid > 0) process.kill(leftPid, 'SIGKILL');
      runner.child.kill('SIGKILL');
    }
  });

  test('refuses a claim of another workspace or agent version: the run is told, the runner exits', async () => {
    const runner = startWarmRunner('bound');
    claim('bound', 1, 'bound-r1', mine, runner.scratch, ['echo mine']);
    assert.equal((await resultOf('bound-r1', 1, runner.logs)).stdout, 'mine\n');
    for (const [k, other] of [
      [2, { ...mine, workspaceId: 'ws_bravo' }],
      [3, { ...mine, agentVersion: 'agt_1@v2' }],
    ] as const) {
      // Each refused claim ends the runner, so each is tried on a runner of its own.
      const r = k === 2 ? runner : startWarmRunner(`bound-${k}`);
      if (k === 3) {
        claim(`bound-${k}`, 1, `bound-${k}-r1`, mine, r.scratch, ['echo mine']);
        await resultOf(`bound-${k}-r1`, 1, r.logs);
      }
      claim(k === 2 ? 'bound' : `bound-${k}`, 2, `bound-r${k}`, other, r.scratch, ['echo never']);
      const refused = await resultOf(`bound-r${k}`, 1, r.logs);
      assert.match(String(refused.error), /serves another workspace or agent version/);
      assert.equal(await r.exited, 0);
      assert.ok(!objects.has(`results/bound-r${k}/exec-2.json`), 'nothing of the refused run ran');
    }
  });

  test('exits when no claim comes within its idle time', async () => {
    const started = Date.now();
    const runner = startWarmRunner('idle', { idleMs: 300 });
    assert.equal(await runner.exited, 0);
    assert.ok(Date.now() - started < 10_000);
    assert.match(runner.logs(), /idle: no claim came/);
  });

  test('exits after its last claim slot', async () => {
    const runner = startWarmRunner('count', { slots: 1 });
    claim('count', 1, 'count-r1', mine, runner.scratch, ['echo one']);
    assert.equal((await resultOf('count-r1', 1, runner.logs)).stdout, 'one\n');
    assert.equal(await runner.exited, 0);
    assert.match(runner.logs(), /all claim slots used/);
  });
});
