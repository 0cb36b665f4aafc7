/**
 * The sandbox runner (its bootstrap and the bundled runner) against a loopback S3 stand-in, and the
 * ECS sandbox end to end with it: mocked ECS, the real runner, S3 on loopback.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { DescribeTasksCommand, ECSClient, RunTaskCommand, StopTaskCommand } from '@aws-sdk/client-ecs';
import { DeleteObjectsCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ZipFile } from 'yazl';
import { EcsSandbox } from '../../functions/adapters/aws/ecs-sandbox.ts';
import {
  type ExecCommand,
  RUNNER_BOOTSTRAP,
  type RunManifest,
  SANDBOX_MANIFEST_ENV,
} from '../../functions/containers/sandbox-protocol.ts';
import {
  ecsMock,
  RUNNER,
  resetSandboxMocks,
  SECRET,
  s3Mock,
  spec,
  TASK_ARN,
  TASK_DEFINITION,
  task,
} from '../helpers/ecs-sandbox-bench.ts';
import { type PresignedObjectStore, startPresignedObjectStore } from '../helpers/presigned-object-store.ts';
import { taskEnvironment } from '../helpers/task-environment.ts';

beforeEach(resetSandboxMocks);

describe('the runner (the bootstrap and the bundled runner) against a loopback S3 stand-in', () => {
  let store: PresignedObjectStore;
  let objects: Map<string, Buffer>;
  let base = '';
  const root = mkdtempSync(join(tmpdir(), 'agenthost-runner-'));
  // The command may run as another user (the runner drops root): it must reach its directory.
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

  const limits = { cpuSeconds: 30, processes: 256, outputBytes: 1024, diskBytes: 10 * 1024 * 1024 };

  /** Starts the runner on a manifest with `slots` command slots; the commands are put separately. */
  function startRunner(name: string, manifest: Partial<RunManifest> = {}, slots = 3) {
    const full: RunManifest = {
      v: 2,
      runId: name,
      workDir: join(root, name),
      env: {},
      bundle: null,
      files: [],
      execs: Array.from({ length: slots }, (_, i) => ({
        commandUrl: `${base}/inputs/${name}/exec-${i + 1}.json`,
        resultUrl: `${base}/results/${name}/exec-${i + 1}.json`,
      })),
      pollMs: [5, 20],
      deadlineMs: Date.now() + 20_000,
      runner: { url: `${base}/inputs/${name}/runner.cjs` },
      limits,
      ...manifest,
    };
    objects.set(`inputs/${name}/runner.cjs`, Buffer.from(RUNNER));
    objects.set(`inputs/${name}/run.json`, Buffer.from(JSON.stringify(full)));
    const child = spawn(process.execPath, ['-e', RUNNER_BOOTSTRAP], {
      env: { [SANDBOX_MANIFEST_ENV]: `${base}/inputs/${name}/run.json`, PATH: process.env.PATH ?? '' },
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
    return { child, exited, logs: () => logs };
  }

  const send = (name: string, n: number, command: ExecCommand) =>
    objects.set(`inputs/${name}/exec-${n}.json`, Buffer.from(JSON.stringify(command)));

  async function resultOf(name: string, n: number, logs: () => string): Promise<Record<string, unknown>> {
    const key = `results/${name}/exec-${n}.json`;
    for (let i = 0; i < 400 && !objects.has(key); i++) await delay(25);
    const stored = objects.get(key);
    assert.ok(stored, `no result ${n} uploaded; runner logs: ${logs()}`);
    return JSON.parse(String(stored));
  }

  /** One command, then stop: the runner exits by itself. */
  async function runRunner(
    name: string,
    manifest: Partial<RunManifest> & { command: string; stdin?: string },
  ): Promise<{ result: Record<string, unknown>; code: number | null; logs: string }> {
    const { command, stdin = '', ...rest } = manifest;
    send(name, 1, { v: 2, command, stdin, killAtMs: Number.MAX_SAFE_INTEGER });
    send(name, 2, { v: 2, stop: true });
    const runner = startRunner(name, rest);
    const code = await runner.exited;
    return { result: await resultOf(name, 1, runner.logs), code, logs: runner.logs() };
  }

  const expectedUid = process.getuid?.() === 0 ? '1000' : String(process.getuid?.());

  test('a tar.gz bundle and files, stdin, env only as given, exit status and stderr tail', async () => {
    const src = join(root, 'src-tar');
    mkdirSync(join(src, 'lib'), { recursive: true });
    writeFileSync(
      join(src, 'lib', 'main.sh'),
      'cat; echo; cat input/01-data.txt; echo " uid=$(id -u) token=$API_TOKEN"; env | sort > env.txt; cat env.txt; echo oops >&2; exit 3\n',
    );
    const tgz = join(root, 'bundle.tar.gz');
    assert.equal(spawnSync('tar', ['-czf', tgz, '-C', src, '.']).status, 0);
    objects.set('inputs/tar/bundle.tar.gz', readFileSync(tgz));
    objects.set('inputs/tar/files/0', Buffer.from('file-data'));
    const { result, code, logs } = await runRunner('tar', {
      command: 'sh lib/main.sh',
      stdin: '{"q":1}',
      env: { API_TOKEN: 'tok-123' },
      bundle: { url: `${base}/inputs/tar/bundle.tar.gz`, format: 'tar.gz' },
      files: [{ path: 'input/01-data.txt', url: `${base}/inputs/tar/files/0` }],
    });
    assert.equal(code, 0);
    assert.equal(result.exitCode, 3);
    assert.equal(result.signal, null);
    assert.equal(result.timedOut, false);
    assert.equal(result.stderrTail, 'oops\n');
    const stdout = String(result.stdout);
    assert.ok(stdout.startsWith(`{"q":1}\nfile-data uid=${expectedUid} token=tok-123\n`), stdout);
    // The environment is the manifest's plus PATH and HOME (and what sh itself sets): no manifest URL.
    const envNames = stdout
      .split('\n')
      .slice(2)
      .filter(Boolean)
      .map((l) => l.split('=')[0]);
    assert.deepEqual(
      envNames.filter((n) => !['PWD', 'OLDPWD', 'SHLVL', '_'].includes(n ?? '')),
      ['API_TOKEN', 'HOME', 'PATH'],
    );
    assert.ok(!stdout.includes(SANDBOX_MANIFEST_ENV));
    assert.equal(typeof result.durationMs, 'number');
    // The runner's own log lines hold no input, output or secret.
    assert.ok(!logs.includes('tok-123') && !logs.includes('file-data') && !logs.includes('oops'), logs);
  });

  test('a zip bundle: files, executable bits, directories and symbolic links', async () => {
    const zip = new ZipFile();
    zip.addBuffer(Buffer.from('#!/bin/sh\necho "zip ok $(cat data/value.txt)"\n'), 'bin/run', {
      mode: 0o100755,
    });
    zip.addBuffer(Buffer.from('42'), 'data/value.txt');
    zip.addEmptyDirectory('empty/');
    zip.addBuffer(Buffer.from('data/value.txt'), 'link.txt', { mode: 0o120777 });
    zip.end();
    const chunks: Buffer[] = [];
    for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
    objects.set('inputs/zip/bundle.zip', Buffer.concat(chunks));
    const { result } = await runRunner('zip', {
      command: './bin/run && cat link.txt && test -d empty && echo dir',
      bundle: { url: `${base}/inputs/zip/bundle.zip`, format: 'zip' },
    });
    assert.equal(result.exitCode, 0, String(result.stderrTail));
    assert.equal(result.stdout, 'zip ok 42\n42dir\n');
  });

  test('stdout is cut at outputBytes and reported truncated', async () => {
    const { result } = await runRunner('big', {
      command: 'head -c 5000 /dev/zero | tr "\\0" a',
      limits: { cpuSeconds: 30, processes: 256, outputBytes: 100, diskBytes: 1024 * 1024 },
    });
    assert.equal(result.stdout, 'a'.repeat(100));
    assert.equal(result.stdoutTruncated, true);
    assert.equal(result.exitCode, 0);
  });

  test('the command is killed before the deadline and the result still uploaded', async () => {
    const started = Date.now();
    const { result } = await runRunner('slow', {
      command: 'echo started; sleep 30 & sleep 30',
      // The runner kills RUNNER_DEADLINE_MARGIN_MS (1.5 s) before the deadline: this leaves the
      // command 3.5 s to start and print on a loaded machine (2 s left 0.5 s, which flaked).
      deadlineMs: Date.now() + 5000,
    });
    // The whole result on failure: a SIGKILL without timedOut was another process's kill.
    assert.equal(result.timedOut, true, JSON.stringify(result));
    assert.equal(result.signal, 'SIGKILL');
    assert.equal(result.exitCode, null);
    assert.equal(result.stdout, 'started\n');
    assert.ok(Date.now() - started < 10_000, 'background children (sleep 30) do not hold the runner');
  });

  test('an unsafe file path or a refused download is reported as a runner error', async () => {
    const { result } = await runRunner('unsafe', {
      command: 'true',
      files: [{ path: '../outside.txt', url: `${base}/inputs/unsafe/files/0` }],
    });
    assert.match(String(result.error), /refused path/);
    const denied = await runRunner('denied', {
      command: 'true',
      bundle: { url: `${base}/inputs/denied/missing.tar.gz`, format: 'tar.gz' },
    });
    assert.match(String(denied.result.error), /download failed with HTTP 403/);
    // A bundle read where the store keeps it, replaced since the run began: refused, not run.
    objects.set('inputs/replaced/bundle.tar.gz', Buffer.from('new bytes'));
    const replaced = await runRunner('replaced', {
      command: 'true',
      bundle: {
        url: `${base}/inputs/replaced/bundle.tar.gz`,
        format: 'tar.gz',
        sha256: createHash('sha256').update('old bytes').digest('hex'),
      },
    });
    assert.match(String(replaced.result.error), /bundle was replaced after this run began/);
  });
  test('one runner takes many commands in order, polling for each, until the stop command', async () => {
    const runner = startRunner('many', { env: { TOKEN: 'tok-9' } }, 5);
    try {
      send('many', 1, {
        v: 2,
        command: 'echo one > state.txt; echo "$TOKEN"',
        stdin: '',
        killAtMs: Date.now() + 10_000,
      });
      assert.equal((await resultOf('many', 1, runner.logs)).stdout, 'tok-9\n');
      // The next command arrives later: the runner polls until it exists.
      await delay(100);
      send('many', 2, {
        v: 2,
        command: 'cat; cat state.txt; id -u',
        stdin: 'in-2 ',
        killAtMs: Date.now() + 10_000,
      });
      const second = await resultOf('many', 2, runner.logs);
      assert.equal(second.stdout, `in-2 one\n${expectedUid}\n`);
      send('many', 3, { v: 2, command: 'sleep 30', stdin: '', killAtMs: Date.now() + 300 });
      const third = await resultOf('many', 3, runner.logs);
      assert.equal(third.timedOut, true, 'killAtMs ends one command, not the runner');
      send('many', 4, { v: 2, stop: true });
      assert.equal(await runner.exited, 0);
      assert.ok(!objects.has('results/many/exec-4.json'));
      assert.match(runner.logs(), /"msg":"stopped"/);
      assert.ok(!runner.logs().includes('tok-9'));
    } finally {
      runner.child.kill('SIGKILL');
    }
  });

  test('the first command from the manifest, and a command marked last ends the run: no command object read for either end', async () => {
    // Were the runner to read command 1's object, it would run this instead.
    send('inline', 1, { v: 2, command: 'echo object', stdin: '', killAtMs: Date.now() + 10_000 });
    const runner = startRunner(
      'inline',
      { first: { v: 2, command: 'echo first', stdin: '', killAtMs: Date.now() + 10_000 } },
      5,
    );
    try {
      assert.equal((await resultOf('inline', 1, runner.logs)).stdout, 'first\n');
      send('inline', 2, { v: 2, command: 'echo last', stdin: '', killAtMs: Date.now() + 10_000, last: true });
      assert.equal((await resultOf('inline', 2, runner.logs)).stdout, 'last\n');
      assert.equal(await runner.exited, 0, 'no stop command: it ended with the last one');
      assert.match(runner.logs(), /"msg":"last command done"/);
    } finally {
      runner.child.kill('SIGKILL');
    }
  });

  test('without a stop command the runner ends at the run deadline', async () => {
    const started = Date.now();
    const runner = startRunner('idle', { deadlineMs: Date.now() + 600 });
    assert.equal(await runner.exited, 0);
    assert.ok(Date.now() - started < 5000);
    assert.match(runner.logs(), /deadline reached/);
  });

  test('the command cannot read the manifest or any presigned URL', {
    skip: process.getuid?.() !== 0 && 'the uid switch needs root',
  }, async () => {
    const { result } = await runRunner('peek', {
      command:
        'env; cat /proc/$PPID/environ 2>/dev/null | tr "\\0" "\\n"; ls -a; cat /proc/1/cmdline 2>/dev/null | head -c 0',
    });
    assert.equal(result.exitCode, 0, String(result.stderrTail));
    assert.ok(!String(result.stdout).includes(base), String(result.stdout));
    assert.ok(!String(result.stdout).includes(SANDBOX_MANIFEST_ENV));
  });

  describe('EcsSandbox end to end: mocked ECS, the real runner, S3 on loopback', () => {
    let child: ReturnType<typeof spawn> | undefined;
    let exit: number | null | undefined;
    let stopped: string | undefined;
    const e2eRoot = join(root, 'e2e');

    beforeEach(() => {
      child = undefined;
      exit = undefined;
      ecsMock.reset();
      s3Mock.reset();
      s3Mock.on(PutObjectCommand).callsFake((input: { Key: string; Body: Buffer }) => {
        let data = Buffer.from(input.Body);
        if (input.Key.endsWith('/run.json')) {
          // Never /work on the test machine: the runner would hand it to uid 1000.
          data = Buffer.from(JSON.stringify({ ...JSON.parse(String(data)), workDir: e2eRoot }));
        }
        objects.set(input.Key, data);
        return { VersionId: 'v1' };
      });
      s3Mock.on(GetObjectCommand).callsFake((input: { Key: string }) => {
        const data = objects.get(input.Key);
        // As S3 answers a role without s3:ListBucket.
        if (!data) throw Object.assign(new Error('Access Denied'), { name: 'AccessDenied' });
        return { Body: { transformToString: async () => String(data) }, ContentLength: data.length };
      });
      // Deletion is asserted by the unit tests; here the runner must still see the stop command.
      s3Mock.on(DeleteObjectsCommand).resolves({});
      ecsMock.on(RunTaskCommand).callsFake((input) => {
        const env = taskEnvironment(input, (key) => objects.get(key));
        child = spawn(process.execPath, ['-e', RUNNER_BOOTSTRAP], {
          env: { ...env, PATH: process.env.PATH ?? '' },
          stdio: 'ignore',
        });
        child.on('exit', (code) => {
          exit = code;
        });
        return { tasks: [{ taskArn: TASK_ARN, lastStatus: 'PROVISIONING' }], failures: [] };
      });
      ecsMock
        .on(DescribeTasksCommand)
        .callsFake(() =>
          exit === undefined
            ? task('RUNNING')
            : task('STOPPED', { containers: [{ name: 'runner', exitCode: exit }] }),
        );
      ecsMock.on(StopTaskCommand).callsFake((input) => {
        stopped = input.reason;
        return {};
      });
    });
    after(() => child?.kill('SIGKILL'));

    function e2eSandbox(): EcsSandbox {
      return new EcsSandbox({
        cluster: 'agenthost-sandbox',
        taskDefinition: TASK_DEFINITION,
        subnets: ['subnet-a'],
        securityGroups: ['sg-1'],
        bucket: 'agenthost-bundles',
        region: 'eu-west-1',
        ecs: new ECSClient({ region: 'eu-west-1' }),
        s3: new S3Client({ region: 'eu-west-1' }),
        presign: async (_method, key) => `${base}/${key}`,
        pollMs: 5,
        maxPollMs: 20,
        describeMs: 200,
        maxExecs: 20,
        runnerSource: RUNNER,
      });
    }

    test('three execs, file operations and a timed-out exec in one task; close stops it', async () => {
      const session = await e2eSandbox().openSession(
        spec({
          runId: 'e2e-1',
          bundle: undefined,
          files: [{ path: 'in/a.txt', data: Buffer.from('from-spec') }],
        }),
      );
      try {
        const first = await session.exec('cat in/a.txt; echo " $API_TOKEN"; echo x > made.txt');
        assert.equal(first.stdout, `from-spec ${SECRET}\n`);
        const second = await session.exec('cat; cat made.txt', { stdin: 'piped ' });
        assert.equal(second.stdout, 'piped x\n');
        const third = await session.exec('exit 4');
        assert.equal(third.exitCode, 4);
        assert.equal(ecsMock.commandCalls(RunTaskCommand).length, 1);

        await session.writeFile("dir/it's.bin", Buffer.from([0, 1, 2, 255]));
        assert.deepEqual(await session.readFile("dir/it's.bin"), Buffer.from([0, 1, 2, 255]));
        assert.equal(String(await session.readFile('made.txt')), 'x\n');
        assert.deepEqual(await session.listFiles(), ["dir/it's.bin", 'in/a.txt', 'made.txt']);
        assert.deepEqual(await session.listFiles('dir'), ["dir/it's.bin"]);
        await assert.rejects(session.readFile('dir'), (err: Error) => err.name === 'SandboxPathError');
        await assert.rejects(
          session.readFile('missing.txt'),
          (err: Error) => err.name === 'SandboxPathError',
        );
        await assert.rejects(session.listFiles('nope'), /not a directory/);
        await assert.rejects(session.readFile('../etc/passwd'), /refused path/);

        // The runner kills the command before the exec's timeout; the task keeps running.
        const slow = await session.exec('sleep 30', { timeoutMs: 1200 });
        assert.equal(slow.timedOut, true);
        assert.equal(slow.signal, 'SIGKILL');
        assert.equal(stopped, undefined);
        assert.equal((await session.exec('echo after')).stdout, 'after\n');
        assert.equal(ecsMock.commandCalls(RunTaskCommand).length, 1);
        assert.equal(exit, undefined, 'the task still runs');
      } finally {
        await session.close();
      }
      assert.equal(stopped, 'agenthost: session closed');
      for (let i = 0; i < 200 && exit === undefined; i++) await delay(10);
      assert.equal(exit, 0, 'the runner ended on the stop command');
    });
  });
});
