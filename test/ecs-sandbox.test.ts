import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { DescribeTasksCommand, ECSClient, RunTaskCommand, StopTaskCommand } from '@aws-sdk/client-ecs';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { ZipFile } from 'yazl';
import {
  createEcsSandbox,
  createS3Presigner,
  EcsSandbox,
  RUNNER_SOURCE,
  type RunManifest,
  type RunResult,
  SANDBOX_MANIFEST_ENV,
} from '../functions/adapters/aws/ecs-sandbox.ts';
import {
  DEFAULT_SANDBOX_LIMITS,
  SandboxUnavailableError,
  type SessionSpec,
} from '../functions/ports/sandbox.ts';

const ecsMock = mockClient(ECSClient);
const s3Mock = mockClient(S3Client);

const TASK_ARN = 'arn:aws:ecs:eu-west-1:123456789012:task/agenthost-sandbox/0123456789abcdef';
const TASK_DEFINITION = 'arn:aws:ecs:eu-west-1:123456789012:task-definition/AgenthostSandbox:7';
const SECRET = 'sk-live-very-secret-value';

/** URLs that say what was signed; TTLs recorded apart (they depend on the clock). */
const signed: { method: string; key: string; ttl: number }[] = [];
const presign = async (method: 'GET' | 'PUT', key: string, ttl: number) => {
  signed.push({ method, key, ttl });
  return `https://signed.example/${method}/${key}`;
};

function sandbox(pollMs = 1): EcsSandbox {
  return new EcsSandbox({
    cluster: 'agenthost-sandbox',
    taskDefinition: TASK_DEFINITION,
    subnets: ['subnet-a', 'subnet-b'],
    securityGroups: ['sg-1'],
    bucket: 'agenthost-bundles',
    region: 'eu-west-1',
    ecs: new ECSClient({ region: 'eu-west-1' }),
    s3: new S3Client({ region: 'eu-west-1' }),
    presign,
    pollMs,
    maxPollMs: 5,
  });
}

function spec(overrides: Partial<SessionSpec> = {}): SessionSpec {
  return {
    runId: 'req-0b7e',
    workspaceId: 'ws-42',
    bundle: { data: Buffer.from('bundle-bytes'), format: 'tar.gz' },
    files: [{ path: 'input/01-report.txt', data: Buffer.from('report') }],
    env: { API_TOKEN: SECRET, PLATFORM_RUN_ID: 'req-0b7e' },
    network: 'none',
    limits: DEFAULT_SANDBOX_LIMITS,
    deadlineMs: Date.now() + 60_000,
    ...overrides,
  };
}

const okResult: RunResult = {
  v: 1,
  exitCode: 0,
  signal: null,
  stdout: '{"ok":true}',
  stdoutTruncated: false,
  stderrTail: 'warming up',
  timedOut: false,
  durationMs: 1234,
};

const body = (value: unknown) => ({ transformToString: async () => JSON.stringify(value) }) as never;
const task = (lastStatus: string, extra: Record<string, unknown> = {}) => ({
  tasks: [{ taskArn: TASK_ARN, lastStatus, ...extra }],
});

function manifestUploaded(): RunManifest {
  const put = s3Mock
    .commandCalls(PutObjectCommand)
    .find((c) => c.args[0].input.Key === 'sandbox-inputs/req-0b7e/run.json');
  assert.ok(put, 'no manifest uploaded');
  assert.equal(put.args[0].input.ContentType, 'application/json');
  return JSON.parse(String(put.args[0].input.Body));
}

beforeEach(() => {
  ecsMock.reset();
  s3Mock.reset();
  signed.length = 0;
  s3Mock.on(PutObjectCommand).callsFake((input: { Key: string }) => ({ VersionId: `v-${input.Key}` }));
  s3Mock.on(DeleteObjectsCommand).resolves({});
  ecsMock
    .on(RunTaskCommand)
    .resolves({ tasks: [{ taskArn: TASK_ARN, lastStatus: 'PROVISIONING' }], failures: [] });
});

describe('EcsSandbox: one Fargate task per session', () => {
  test('RunTask gets exactly the task, network and the manifest URL; the run is read back from S3', async () => {
    ecsMock
      .on(DescribeTasksCommand)
      .resolvesOnce(task('PROVISIONING'))
      .resolvesOnce(task('RUNNING'))
      .resolves(
        task('STOPPED', {
          stopCode: 'EssentialContainerExited',
          containers: [{ name: 'runner', exitCode: 0 }],
        }),
      );
    s3Mock
      .on(GetObjectCommand)
      .resolves({ Body: body(okResult), VersionId: 'result-v1', ContentLength: 200 });

    const session = await sandbox().openSession(spec());
    assert.equal(session.workDir, '/work');
    const result = await session.exec('node index.js', { stdin: '{"q":1}' });
    await session.close();

    assert.deepEqual(result, {
      exitCode: 0,
      signal: null,
      stdout: '{"ok":true}',
      stderrTail: 'warming up',
      timedOut: false,
      stdoutTruncated: false,
      durationMs: 1234,
    });

    const runs = ecsMock.commandCalls(RunTaskCommand);
    assert.equal(runs.length, 1);
    assert.deepEqual(runs[0]?.args[0].input, {
      cluster: 'agenthost-sandbox',
      taskDefinition: TASK_DEFINITION,
      launchType: 'FARGATE',
      count: 1,
      clientToken: 'req-0b7e',
      startedBy: 'req-0b7e',
      networkConfiguration: {
        awsvpcConfiguration: {
          subnets: ['subnet-a', 'subnet-b'],
          securityGroups: ['sg-1'],
          assignPublicIp: 'DISABLED',
        },
      },
      overrides: {
        containerOverrides: [
          {
            name: 'runner',
            environment: [
              {
                name: SANDBOX_MANIFEST_ENV,
                value: 'https://signed.example/GET/sandbox-inputs/req-0b7e/run.json',
              },
            ],
          },
        ],
      },
      tags: [
        { key: 'agenthost:run-id', value: 'req-0b7e' },
        { key: 'agenthost:workspace-id', value: 'ws-42' },
      ],
    });
    // Secrets and inputs travel in the manifest object, never in the ECS API (DescribeTasks, CloudTrail).
    const runInput = JSON.stringify(runs[0]?.args[0].input);
    assert.ok(!runInput.includes(SECRET));
    assert.ok(!runInput.includes('{"q":1}'));

    const manifest = manifestUploaded();
    assert.ok(manifest.deadlineMs > Date.now());
    assert.deepEqual(
      { ...manifest, deadlineMs: 0 },
      {
        v: 1,
        runId: 'req-0b7e',
        workDir: '/work',
        command: 'node index.js',
        stdin: '{"q":1}',
        env: { API_TOKEN: SECRET, PLATFORM_RUN_ID: 'req-0b7e' },
        bundle: { url: 'https://signed.example/GET/sandbox-inputs/req-0b7e/bundle.tar.gz', format: 'tar.gz' },
        files: [
          { path: 'input/01-report.txt', url: 'https://signed.example/GET/sandbox-inputs/req-0b7e/files/0' },
        ],
        resultUrl: 'https://signed.example/PUT/sandbox-results/req-0b7e.json',
        deadlineMs: 0,
        limits: {
          cpuSeconds: 300,
          processes: 64,
          outputBytes: 4 * 1024 * 1024,
          diskBytes: 512 * 1024 * 1024,
        },
      },
    );
    // The only PUT URL is this run's result; every URL outlives the deadline by a minute at most.
    assert.deepEqual(
      signed.filter((s) => s.method === 'PUT').map((s) => s.key),
      ['sandbox-results/req-0b7e.json'],
    );
    for (const s of signed) assert.ok(s.ttl >= 60 && s.ttl <= 121, `${s.key}: ${s.ttl}`);

    const uploads = s3Mock.commandCalls(PutObjectCommand).map((c) => c.args[0].input);
    assert.deepEqual(uploads.map((u) => u.Key).sort(), [
      'sandbox-inputs/req-0b7e/bundle.tar.gz',
      'sandbox-inputs/req-0b7e/files/0',
      'sandbox-inputs/req-0b7e/run.json',
    ]);
    for (const u of uploads) assert.equal(u.Bucket, 'agenthost-bundles');
    assert.deepEqual(
      uploads.find((u) => u.Key === 'sandbox-inputs/req-0b7e/bundle.tar.gz')?.Body,
      Buffer.from('bundle-bytes'),
    );

    // Polled until STOPPED, then the result object; no StopTask for a task that ended by itself.
    assert.equal(ecsMock.commandCalls(DescribeTasksCommand).length, 3);
    assert.deepEqual(ecsMock.commandCalls(DescribeTasksCommand)[0]?.args[0].input, {
      cluster: 'agenthost-sandbox',
      tasks: [TASK_ARN],
    });
    assert.deepEqual(s3Mock.commandCalls(GetObjectCommand)[0]?.args[0].input, {
      Bucket: 'agenthost-bundles',
      Key: 'sandbox-results/req-0b7e.json',
    });
    assert.equal(ecsMock.commandCalls(StopTaskCommand).length, 0);

    // close deletes exactly the versions the session wrote and read.
    const deletes = s3Mock.commandCalls(DeleteObjectsCommand);
    assert.equal(deletes.length, 1);
    assert.deepEqual(
      [...(deletes[0]?.args[0].input.Delete?.Objects ?? [])].sort((a, b) =>
        String(a.Key).localeCompare(String(b.Key)),
      ),
      [
        {
          Key: 'sandbox-inputs/req-0b7e/bundle.tar.gz',
          VersionId: 'v-sandbox-inputs/req-0b7e/bundle.tar.gz',
        },
        { Key: 'sandbox-inputs/req-0b7e/files/0', VersionId: 'v-sandbox-inputs/req-0b7e/files/0' },
        { Key: 'sandbox-inputs/req-0b7e/run.json', VersionId: 'v-sandbox-inputs/req-0b7e/run.json' },
        { Key: 'sandbox-results/req-0b7e.json', VersionId: 'result-v1' },
      ],
    );
  });

  test('the output is capped at the limit whatever the result object says', async () => {
    ecsMock.on(DescribeTasksCommand).resolves(task('STOPPED'));
    s3Mock
      .on(GetObjectCommand)
      .resolves({ Body: body({ ...okResult, stdout: 'x'.repeat(20), stderrTail: 'e'.repeat(9000) }) });
    const session = await sandbox().openSession(
      spec({ limits: { ...DEFAULT_SANDBOX_LIMITS, outputBytes: 8 }, bundle: undefined, files: [] }),
    );
    const result = await session.exec('true');
    assert.equal(result.stdout, 'xxxxxxxx');
    assert.equal(result.stdoutTruncated, true);
    assert.equal(result.stderrTail.length, 8192);
    assert.equal(manifestUploaded().bundle, null);
  });

  test('at the deadline the task is stopped and the run reported as timed out', async () => {
    ecsMock.on(DescribeTasksCommand).resolves(task('RUNNING'));
    ecsMock.on(StopTaskCommand).resolves({});
    s3Mock.on(GetObjectCommand).rejects(new NoSuchKey({ message: 'no such key', $metadata: {} }));
    const session = await sandbox(5).openSession(spec({ deadlineMs: Date.now() + 80 }));
    const result = await session.exec('sleep 600');
    assert.equal(result.timedOut, true);
    assert.equal(result.exitCode, null);
    assert.equal(result.signal, 'SIGKILL');
    assert.equal(result.stdout, '');
    assert.ok(ecsMock.commandCalls(DescribeTasksCommand).length >= 1);
    assert.deepEqual(
      ecsMock.commandCalls(StopTaskCommand).map((c) => c.args[0].input),
      [{ cluster: 'agenthost-sandbox', task: TASK_ARN, reason: 'agenthost: run deadline reached' }],
    );
    await session.close();
    assert.equal(ecsMock.commandCalls(StopTaskCommand).length, 1, 'close does not stop it twice');
  });

  test('timeoutMs shortens the deadline; an abort stops the task too', async () => {
    ecsMock.on(DescribeTasksCommand).resolves(task('RUNNING'));
    ecsMock.on(StopTaskCommand).resolves({});
    s3Mock.on(GetObjectCommand).rejects(new NoSuchKey({ message: 'no such key', $metadata: {} }));
    const controller = new AbortController();
    const session = await sandbox(5).openSession(spec());
    setTimeout(() => controller.abort(), 30);
    const result = await session.exec('sleep 600', { signal: controller.signal, timeoutMs: 50_000 });
    assert.equal(result.timedOut, true);
    assert.equal(ecsMock.commandCalls(StopTaskCommand)[0]?.args[0].input.reason, 'agenthost: run aborted');
    assert.ok(manifestUploaded().deadlineMs <= Date.now() + 50_000);
  });

  test('a task that ECS cannot start is a clear SandboxUnavailableError', async () => {
    ecsMock.on(RunTaskCommand).resolves({
      tasks: [],
      failures: [{ arn: TASK_DEFINITION, reason: 'RESOURCE:ENI', detail: 'ENI limit reached' }],
    });
    const session = await sandbox().openSession(spec());
    await assert.rejects(
      session.exec('node index.js'),
      (err: Error) =>
        err instanceof SandboxUnavailableError &&
        /ECS could not start the sandbox task for run req-0b7e: RESOURCE:ENI: ENI limit reached/.test(
          err.message,
        ),
    );
    assert.equal(ecsMock.commandCalls(DescribeTasksCommand).length, 0);
    await session.close();
    assert.equal(s3Mock.commandCalls(DeleteObjectsCommand).length, 1, 'the staged inputs are deleted');
  });

  test('a task that stopped without a result: image or network trouble is ours, out of memory is the run’s', async () => {
    s3Mock.on(GetObjectCommand).rejects(new NoSuchKey({ message: 'no such key', $metadata: {} }));
    ecsMock.on(DescribeTasksCommand).resolves(
      task('STOPPED', {
        stopCode: 'TaskFailedToStart',
        stoppedReason: 'CannotPullContainerError: pull access denied',
        containers: [{ name: 'runner' }],
      }),
    );
    const first = await sandbox().openSession(spec());
    await assert.rejects(first.exec('true'), (err: Error) => {
      assert.ok(err instanceof SandboxUnavailableError);
      assert.match(err.message, /stopped without a result \(TaskFailedToStart: CannotPullContainerError/);
      return true;
    });

    ecsMock.on(DescribeTasksCommand).resolves(
      task('STOPPED', {
        stopCode: 'EssentialContainerExited',
        containers: [
          { name: 'runner', exitCode: 137, reason: 'OutOfMemoryError: Container killed due to memory usage' },
        ],
      }),
    );
    const second = await sandbox().openSession(spec());
    const result = await second.exec('true');
    assert.equal(result.signal, 'SIGKILL');
    assert.equal(result.exitCode, null);
    assert.equal(result.timedOut, false);
    assert.match(result.stderrTail, /OutOfMemoryError/);
  });

  test('a runner that failed before the command (bad bundle, download refused) is a SandboxUnavailableError', async () => {
    ecsMock.on(DescribeTasksCommand).resolves(task('STOPPED'));
    s3Mock.on(GetObjectCommand).resolves({ Body: body({ v: 1, error: 'download failed with HTTP 403' }) });
    const session = await sandbox().openSession(spec());
    await assert.rejects(
      session.exec('true'),
      /runner failed for run req-0b7e: download failed with HTTP 403/,
    );

    s3Mock.on(GetObjectCommand).resolves({ Body: body({ v: 1, exitCode: 'zero' }) });
    const other = await sandbox().openSession(spec());
    await assert.rejects(other.exec('true'), /result of run req-0b7e is malformed/);
  });

  test('a second exec, file reads and listings are refused clearly; writes stage files before the exec', async () => {
    ecsMock.on(DescribeTasksCommand).resolves(task('STOPPED'));
    s3Mock.on(GetObjectCommand).resolves({ Body: body(okResult) });
    const session = await sandbox().openSession(spec({ files: [] }));
    await session.writeFile('notes/a.txt', 'hello');
    await assert.rejects(session.writeFile('../escape', 'x'), /refused path/);
    await assert.rejects(session.readFile('notes/a.txt'), /readFile is not supported by the ECS sandbox yet/);
    await assert.rejects(session.listFiles(), /listFiles is not supported by the ECS sandbox yet/);
    await session.exec('cat notes/a.txt');
    assert.deepEqual(manifestUploaded().files, [
      { path: 'notes/a.txt', url: 'https://signed.example/GET/sandbox-inputs/req-0b7e/files/0' },
    ]);
    await assert.rejects(
      session.exec('echo again'),
      (err: Error) =>
        err instanceof SandboxUnavailableError &&
        /a second exec in one session is not supported by the ECS sandbox yet/.test(err.message),
    );
    await assert.rejects(session.writeFile('late.txt', 'x'), /writeFile after exec is not supported/);
    assert.equal(ecsMock.commandCalls(RunTaskCommand).length, 1);
    await session.close();
  });

  test('refuses network egress, unsafe run ids and file paths before anything runs', async () => {
    await assert.rejects(sandbox().openSession(spec({ network: 'egress' })), SandboxUnavailableError);
    await assert.rejects(sandbox().openSession(spec({ runId: '../x' })), /run id/);
    await assert.rejects(
      sandbox().openSession(spec({ files: [{ path: '/etc/passwd', data: Buffer.from('') }] })),
      /refused path/,
    );
    assert.equal(ecsMock.commandCalls(RunTaskCommand).length, 0);
    assert.equal(s3Mock.commandCalls(PutObjectCommand).length, 0);
  });

  test('close stops a task still running after an error', async () => {
    ecsMock.on(DescribeTasksCommand).rejects(new Error('throttled'));
    ecsMock.on(StopTaskCommand).resolves({});
    const session = await sandbox().openSession(spec());
    await assert.rejects(session.exec('true'), /throttled/);
    await session.close();
    assert.deepEqual(
      ecsMock.commandCalls(StopTaskCommand).map((c) => c.args[0].input),
      [{ cluster: 'agenthost-sandbox', task: TASK_ARN, reason: 'agenthost: session closed' }],
    );
  });

  test('createEcsSandbox names every missing setting', () => {
    assert.throws(
      () => createEcsSandbox({ awsRegion: 'eu-west-1', bundleBucket: 'b', sandboxCluster: 'c' }),
      /PLATFORM_SANDBOX_TASK_DEFINITION, PLATFORM_SANDBOX_SUBNETS, PLATFORM_SANDBOX_SECURITY_GROUPS not set/,
    );
    const ok = createEcsSandbox({
      awsRegion: 'eu-west-1',
      bundleBucket: 'b',
      sandboxCluster: 'c',
      sandboxTaskDefinition: TASK_DEFINITION,
      sandboxSubnets: 'subnet-a, subnet-b',
      sandboxSecurityGroups: ['sg-1'],
    });
    assert.equal(ok.kind, 'ecs');
  });

  test('presigned PUT URLs carry no checksum (S3 would refuse the upload) and only sandbox keys are signed', async () => {
    const sign = createS3Presigner({
      bucket: 'agenthost-bundles-x1',
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    });
    const put = new URL(await sign('PUT', 'sandbox-results/req-1.json', 300));
    assert.equal(put.pathname, '/sandbox-results/req-1.json');
    assert.equal(put.searchParams.get('X-Amz-Expires'), '300');
    assert.equal(put.searchParams.get('x-id'), 'PutObject');
    assert.deepEqual(
      [...put.searchParams.keys()].filter((k) => /checksum/i.test(k)),
      [],
    );
    const get = new URL(await sign('GET', 'sandbox-inputs/req-1/run.json', 300));
    assert.equal(get.searchParams.get('x-id'), 'GetObject');
    await assert.rejects(sign('GET', 'bundles/acme/tool/v1.tar.gz', 300), /will not sign/);
  });
});

describe('the runner (RUNNER_SOURCE) against a loopback S3 stand-in', () => {
  const objects = new Map<string, Buffer>();
  let server: Server;
  let base = '';
  const root = mkdtempSync(join(tmpdir(), 'agenthost-runner-'));
  // The command may run as another user (the runner drops root): it must reach its directory.
  chmodSync(root, 0o755);

  before(async () => {
    server = createServer((req, res) => {
      const key = decodeURIComponent((req.url ?? '/').slice(1));
      if (req.method === 'PUT') {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          objects.set(key, Buffer.concat(chunks));
          res.end();
        });
        return;
      }
      const data = objects.get(key);
      res.statusCode = data ? 200 : 403;
      res.end(data ?? 'denied');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.close();
    rmSync(root, { recursive: true, force: true });
  });

  async function runRunner(
    name: string,
    manifest: Partial<RunManifest> & { command: string },
  ): Promise<{ result: Record<string, unknown>; code: number | null; logs: string }> {
    const workDir = join(root, name);
    const full: RunManifest = {
      v: 1,
      runId: name,
      workDir,
      stdin: '',
      env: {},
      bundle: null,
      files: [],
      resultUrl: `${base}/results/${name}.json`,
      deadlineMs: Date.now() + 20_000,
      limits: { cpuSeconds: 30, processes: 256, outputBytes: 1024, diskBytes: 10 * 1024 * 1024 },
      ...manifest,
    };
    objects.set(`inputs/${name}/run.json`, Buffer.from(JSON.stringify(full)));
    const child = spawn(process.execPath, ['-e', RUNNER_SOURCE], {
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
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const stored = objects.get(`results/${name}.json`);
    assert.ok(stored, `no result uploaded; runner logs: ${logs}`);
    return { result: JSON.parse(String(stored)), code, logs };
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
      deadlineMs: Date.now() + 2000,
    });
    assert.equal(result.timedOut, true);
    assert.equal(result.signal, 'SIGKILL');
    assert.equal(result.exitCode, null);
    assert.equal(result.stdout, 'started\n');
    assert.ok(Date.now() - started < 5000, 'background children do not hold the runner');
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
  });
});
