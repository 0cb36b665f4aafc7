import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
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
import { createEcsSandbox, EcsSandbox } from '../../functions/adapters/aws/ecs-sandbox.ts';
import { createS3Presigner } from '../../functions/adapters/aws/ecs-sandbox-staging.ts';
import {
  type ExecCommand,
  RUNNER_BOOTSTRAP,
  type RunManifest,
  type RunResult,
  SANDBOX_MANIFEST_ENV,
} from '../../functions/containers/sandbox-protocol.ts';
import {
  DEFAULT_SANDBOX_LIMITS,
  SandboxCapacityError,
  SandboxUnavailableError,
  type SessionSpec,
} from '../../functions/ports/sandbox.ts';
import { buildContainerProgram } from '../../lib/container-programs.ts';
import { type PresignedObjectStore, startPresignedObjectStore } from '../helpers/presigned-object-store.ts';
import { taskEnvironment } from '../helpers/task-environment.ts';

const ecsMock = mockClient(ECSClient);
const s3Mock = mockClient(S3Client);

const TASK_ARN = 'arn:aws:ecs:eu-west-1:123456789012:task/agenthost-sandbox/0123456789abcdef';
const TASK_DEFINITION = 'arn:aws:ecs:eu-west-1:123456789012:task-definition/AgenthostSandbox:7';
const SECRET = 'sk-live-very-secret-value';
const INPUTS_KEY = 'arn:aws:kms:eu-west-1:123456789012:key/0b7e0000-0000-4000-8000-000000000001';

/** The runner as the stack bundles it into the run paths' assets (lib/container-programs.ts). */
const RUNNER = buildContainerProgram('sandbox-runner');

/** URLs that say what was signed; TTLs recorded apart (they depend on the clock). */
const signed: { method: string; key: string; ttl: number }[] = [];
const presign = async (method: 'GET' | 'PUT', key: string, ttl: number) => {
  signed.push({ method, key, ttl });
  return `https://signed.example/${method}/${key}`;
};

function sandbox(
  pollMs = 1,
  extra: { maxExecs?: number; describeMs?: number; taskStartMs?: number } = {},
): EcsSandbox {
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
    describeMs: 1,
    maxExecs: 4,
    runnerSource: RUNNER,
    inputsKey: INPUTS_KEY,
    // No start to wait for: a mocked RunTask answers at once (the refusal below sets its own).
    taskStartMs: 0,
    ...extra,
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
const noSuchKey = () => new NoSuchKey({ message: 'no such key', $metadata: {} });

/** Result objects the mocked S3 serves, by key; any other key is NoSuchKey. */
const results = new Map<string, { value: unknown; version?: string }>();
const resultKey = (n: number) => `sandbox-results/req-0b7e/exec-${n}.json`;

function manifestUploaded(): RunManifest {
  const put = s3Mock
    .commandCalls(PutObjectCommand)
    .find((c) => c.args[0].input.Key === 'sandbox-inputs/req-0b7e/run.json');
  assert.ok(put, 'no manifest uploaded');
  assert.equal(put.args[0].input.ContentType, 'application/json');
  return JSON.parse(String(put.args[0].input.Body));
}

/** The command objects written, in order. */
function commandsUploaded(): { key: string; value: ExecCommand }[] {
  return s3Mock
    .commandCalls(PutObjectCommand)
    .map((c) => c.args[0].input)
    .filter((i) => /\/exec-\d+\.json$/.test(String(i.Key)))
    .map((i) => ({ key: String(i.Key), value: JSON.parse(String(i.Body)) }));
}

beforeEach(() => {
  ecsMock.reset();
  s3Mock.reset();
  signed.length = 0;
  results.clear();
  s3Mock.on(PutObjectCommand).callsFake((input: { Key: string }) => ({ VersionId: `v-${input.Key}` }));
  s3Mock.on(DeleteObjectsCommand).resolves({});
  s3Mock.on(GetObjectCommand).callsFake((input: { Key: string }) => {
    const r = results.get(input.Key);
    if (!r) throw noSuchKey();
    return { Body: body(r.value), ContentLength: 200, ...(r.version ? { VersionId: r.version } : {}) };
  });
  ecsMock
    .on(RunTaskCommand)
    .resolves({ tasks: [{ taskArn: TASK_ARN, lastStatus: 'PROVISIONING' }], failures: [] });
  ecsMock.on(DescribeTasksCommand).resolves(task('RUNNING'));
  ecsMock.on(StopTaskCommand).resolves({});
});

describe('EcsSandbox: one long-lived Fargate task per session', () => {
  test('one RunTask with the manifest URL; three execs, the first in the manifest, the others through command objects', async () => {
    for (const n of [1, 2, 3]) {
      results.set(resultKey(n), { value: { ...okResult, stdout: `out-${n}` }, version: `result-v${n}` });
    }
    const session = await sandbox().openSession(spec());
    assert.equal(session.workDir, '/work');
    assert.equal(ecsMock.commandCalls(RunTaskCommand).length, 0, 'nothing starts at openSession');
    const first = await session.exec('node index.js', { stdin: '{"q":1}' });
    const second = await session.exec('ls');
    const third = await session.exec('cat out.txt', { timeoutMs: 10_000 });
    await session.close();

    assert.deepEqual(first, {
      exitCode: 0,
      signal: null,
      stdout: 'out-1',
      stderrTail: 'warming up',
      timedOut: false,
      stdoutTruncated: false,
      durationMs: 1234,
    });
    assert.equal(second.stdout, 'out-2');
    assert.equal(third.stdout, 'out-3');

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
            environmentFiles: [
              { type: 's3', value: 'arn:aws:s3:::agenthost-bundles/sandbox-inputs/req-0b7e/task.env' },
            ],
          },
        ],
      },
      tags: [
        { key: 'agenthost:run-id', value: 'req-0b7e' },
        { key: 'agenthost:workspace-id', value: 'ws-42' },
      ],
    });
    // Secrets and inputs travel in S3 objects, never in the ECS API (DescribeTasks, CloudTrail):
    // not even a URL that reaches them. The env file RunTask names holds the manifest's URL.
    const runInput = JSON.stringify(runs[0]?.args[0].input);
    assert.ok(!runInput.includes(SECRET));
    assert.ok(!runInput.includes('{"q":1}'));
    assert.ok(!runInput.includes('https://'), runInput);
    const envFile = s3Mock
      .commandCalls(PutObjectCommand)
      .find((c) => c.args[0].input.Key === 'sandbox-inputs/req-0b7e/task.env')?.args[0].input;
    assert.equal(
      String(envFile?.Body),
      `${SANDBOX_MANIFEST_ENV}=https://signed.example/GET/sandbox-inputs/req-0b7e/run.json\n`,
    );
    // Every input is written under the sandbox's KMS key, with a Bucket Key (few KMS requests).
    for (const { args } of s3Mock.commandCalls(PutObjectCommand)) {
      assert.deepEqual(
        [args[0].input.ServerSideEncryption, args[0].input.SSEKMSKeyId, args[0].input.BucketKeyEnabled],
        ['aws:kms', INPUTS_KEY, true],
        String(args[0].input.Key),
      );
    }

    const { first: c1, ...manifest } = manifestUploaded();
    assert.ok(manifest.deadlineMs > Date.now());
    const slot = (n: number) => ({
      commandUrl: `https://signed.example/GET/sandbox-inputs/req-0b7e/exec-${n}.json`,
      resultUrl: `https://signed.example/PUT/sandbox-results/req-0b7e/exec-${n}.json`,
    });
    assert.deepEqual(
      { ...manifest, deadlineMs: 0 },
      {
        v: 2,
        runId: 'req-0b7e',
        workDir: '/work',
        env: { API_TOKEN: SECRET, PLATFORM_RUN_ID: 'req-0b7e' },
        bundle: { url: 'https://signed.example/GET/sandbox-inputs/req-0b7e/bundle.tar.gz', format: 'tar.gz' },
        files: [
          { path: 'input/01-report.txt', url: 'https://signed.example/GET/sandbox-inputs/req-0b7e/files/0' },
        ],
        // Command 1 rides in the manifest: no URL to read it from.
        execs: [{ ...slot(1), commandUrl: '' }, slot(2), slot(3), slot(4)],
        pollMs: [1, 5],
        deadlineMs: 0,
        // The runner travels with the run: the task's bootstrap downloads it.
        runner: { url: 'https://signed.example/GET/sandbox-inputs/req-0b7e/runner.cjs' },
        limits: {
          cpuSeconds: 300,
          processes: 64,
          outputBytes: 4 * 1024 * 1024,
          diskBytes: 512 * 1024 * 1024,
        },
      },
    );
    // The only PUT URLs are this run's results; every URL outlives the deadline by a minute at most.
    assert.deepEqual(
      signed.filter((s) => s.method === 'PUT').map((s) => s.key),
      [1, 2, 3, 4].map(resultKey),
    );
    for (const s of signed) assert.ok(s.ttl >= 60 && s.ttl <= 121, `${s.key}: ${s.ttl}`);

    // The first command (stdin included) rode in the manifest: the task started for it. The others
    // and then the stop command, each in its slot's object.
    const commands = commandsUploaded();
    assert.deepEqual(
      commands.map((c) => c.key),
      [2, 3, 4].map((n) => `sandbox-inputs/req-0b7e/exec-${n}.json`),
    );
    const [c2, c3, c4] = commands.map((c) => c.value);
    assert.ok(c1 && 'command' in c1 && c2 && 'command' in c2 && c3 && 'command' in c3);
    assert.equal(c1.command, 'node index.js');
    assert.equal(c1.stdin, '{"q":1}');
    assert.ok(c1.killAtMs <= manifest.deadlineMs - 1500 && c1.killAtMs > Date.now());
    assert.equal(c2.command, 'ls');
    assert.equal(c2.stdin, '');
    assert.ok(c3.killAtMs <= Date.now() + 10_000 - 1500);
    assert.deepEqual(c4, { v: 2, stop: true });

    const uploads = s3Mock.commandCalls(PutObjectCommand).map((c) => c.args[0].input);
    for (const u of uploads) assert.equal(u.Bucket, 'agenthost-bundles');
    assert.deepEqual(
      uploads.find((u) => u.Key === 'sandbox-inputs/req-0b7e/bundle.tar.gz')?.Body,
      Buffer.from('bundle-bytes'),
    );
    assert.deepEqual(s3Mock.commandCalls(GetObjectCommand)[0]?.args[0].input, {
      Bucket: 'agenthost-bundles',
      Key: resultKey(1),
    });

    // close stops the task (the stop command ends the runner; StopTask in case it cannot).
    assert.deepEqual(
      ecsMock.commandCalls(StopTaskCommand).map((c) => c.args[0].input),
      [{ cluster: 'agenthost-sandbox', task: TASK_ARN, reason: 'agenthost: session closed' }],
    );
    // close deletes exactly the versions the session wrote and read.
    const deletes = s3Mock.commandCalls(DeleteObjectsCommand);
    assert.equal(deletes.length, 1);
    const deleted = [...(deletes[0]?.args[0].input.Delete?.Objects ?? [])];
    assert.deepEqual(
      deleted.map((o) => o.Key).sort(),
      [
        'sandbox-inputs/req-0b7e/bundle.tar.gz',
        'sandbox-inputs/req-0b7e/exec-2.json',
        'sandbox-inputs/req-0b7e/exec-3.json',
        'sandbox-inputs/req-0b7e/exec-4.json',
        'sandbox-inputs/req-0b7e/files/0',
        'sandbox-inputs/req-0b7e/run.json',
        'sandbox-inputs/req-0b7e/runner.cjs',
        'sandbox-inputs/req-0b7e/task.env',
        resultKey(1),
        resultKey(2),
        resultKey(3),
      ].sort(),
    );
    assert.deepEqual(
      deleted.find((o) => o.Key === resultKey(2)),
      { Key: resultKey(2), VersionId: 'result-v2' },
    );
    assert.deepEqual(
      deleted.find((o) => o.Key === 'sandbox-inputs/req-0b7e/run.json'),
      { Key: 'sandbox-inputs/req-0b7e/run.json', VersionId: 'v-sandbox-inputs/req-0b7e/run.json' },
    );
  });

  test('a session runs at most maxExecs commands', async () => {
    for (const n of [1, 2]) results.set(resultKey(n), { value: okResult });
    const session = await sandbox(1, { maxExecs: 2 }).openSession(spec());
    await session.exec('true');
    await session.exec('true');
    await assert.rejects(session.exec('true'), /has used all 2 commands/);
    await session.close();
    assert.equal(
      commandsUploaded().length,
      1,
      'the second command only (the first rode in the manifest); no slot is left for the stop command: StopTask ends it',
    );
    assert.equal(ecsMock.commandCalls(StopTaskCommand).length, 1);
  });

  test('the output is capped at the limit whatever the result object says', async () => {
    results.set(resultKey(1), {
      value: { ...okResult, stdout: 'x'.repeat(20), stderrTail: 'e'.repeat(9000) },
    });
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
    // Just over what a run must have left to start a task (none to wait for here, and 3 s to run).
    const session = await sandbox(5).openSession(spec({ deadlineMs: Date.now() + 3200 }));
    const result = await session.exec('sleep 600');
    assert.equal(result.timedOut, true);
    assert.equal(result.exitCode, null);
    assert.equal(result.signal, 'SIGKILL');
    assert.equal(result.stdout, '');
    assert.ok(s3Mock.commandCalls(GetObjectCommand).length >= 1);
    assert.deepEqual(
      ecsMock.commandCalls(StopTaskCommand).map((c) => c.args[0].input),
      [{ cluster: 'agenthost-sandbox', task: TASK_ARN, reason: 'agenthost: run deadline reached' }],
    );
    await session.close();
    assert.equal(ecsMock.commandCalls(StopTaskCommand).length, 1, 'close does not stop it twice');
    assert.equal(
      commandsUploaded().length,
      0,
      'the command rode in the manifest, and no stop command goes to a stopped task',
    );
    assert.equal((manifestUploaded().first as { command?: string } | undefined)?.command, 'sleep 600');
  });

  test('an exec timeout with no result stops the task; later commands are refused clearly', async () => {
    const session = await sandbox(5).openSession(spec());
    const result = await session.exec('sleep 600', { timeoutMs: 60 });
    assert.equal(result.timedOut, true);
    assert.equal(ecsMock.commandCalls(StopTaskCommand).length, 1);
    await assert.rejects(
      session.exec('true'),
      (err: Error) => err instanceof SandboxUnavailableError && /no longer running/.test(err.message),
    );
    await session.close();
  });

  test('timeoutMs shortens the deadline; an abort stops the task too', async () => {
    const controller = new AbortController();
    const session = await sandbox(5).openSession(spec());
    setTimeout(() => controller.abort(), 30);
    const result = await session.exec('sleep 600', { signal: controller.signal, timeoutMs: 50_000 });
    assert.equal(result.timedOut, true);
    assert.equal(ecsMock.commandCalls(StopTaskCommand)[0]?.args[0].input.reason, 'agenthost: run aborted');
    const command = manifestUploaded().first;
    assert.ok(command && 'killAtMs' in command && command.killAtMs <= Date.now() + 50_000);
  });

  test('a run with less time left than a task takes to start starts none: 503 naming the start, at once', async () => {
    const session = await sandbox(1, { taskStartMs: 20_000 }).openSession(
      spec({ deadlineMs: Date.now() + 15_000 }),
    );
    await assert.rejects(session.exec('true'), (err: unknown) => {
      assert.ok(err instanceof SandboxCapacityError, String(err));
      assert.equal(err.reason, 'start');
      assert.match(
        err.message,
        /starting one and running in it takes about 23 s, more than this call has left/,
      );
      return true;
    });
    assert.equal(ecsMock.commandCalls(RunTaskCommand).length, 0);
    await session.close();
  });

  test('a task that ECS cannot start is a clear SandboxUnavailableError, every time', async () => {
    ecsMock.on(RunTaskCommand).resolves({
      tasks: [],
      failures: [{ arn: TASK_DEFINITION, reason: 'RESOURCE:ENI', detail: 'ENI limit reached' }],
    });
    const session = await sandbox().openSession(spec());
    const refused = (err: Error) =>
      err instanceof SandboxUnavailableError &&
      /ECS could not start the sandbox task for run req-0b7e: RESOURCE:ENI: ENI limit reached/.test(
        err.message,
      );
    await assert.rejects(session.exec('node index.js'), refused);
    await assert.rejects(session.readFile('a.txt'), refused);
    assert.equal(ecsMock.commandCalls(RunTaskCommand).length, 1);
    assert.equal(ecsMock.commandCalls(DescribeTasksCommand).length, 0);
    assert.equal(commandsUploaded().length, 0);
    await session.close();
    assert.equal(s3Mock.commandCalls(DeleteObjectsCommand).length, 1, 'the staged inputs are deleted');
  });

  test('a task that stopped without a result: image or network trouble is ours, out of memory is the run’s', async () => {
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
    await assert.rejects(second.exec('true'), /no longer running/);
    await second.close();
    assert.equal(ecsMock.commandCalls(StopTaskCommand).length, 0, 'a stopped task is not stopped again');
  });

  test('a runner that failed before the command (bad bundle, download refused) is a SandboxUnavailableError', async () => {
    results.set(resultKey(1), { value: { v: 1, error: 'download failed with HTTP 403' } });
    const session = await sandbox().openSession(spec());
    await assert.rejects(
      session.exec('true'),
      /runner failed for run req-0b7e: download failed with HTTP 403/,
    );

    results.set(resultKey(1), { value: { v: 1, exitCode: 'zero' } });
    const other = await sandbox().openSession(spec());
    await assert.rejects(other.exec('true'), /result of run req-0b7e is malformed/);
  });

  test('a missing result read as AccessDenied (no s3:ListBucket) means "not yet" too', async () => {
    let calls = 0;
    s3Mock.on(GetObjectCommand).callsFake(() => {
      calls++;
      if (calls < 3) throw Object.assign(new Error('Access Denied'), { name: 'AccessDenied' });
      return { Body: body(okResult) };
    });
    const session = await sandbox().openSession(spec());
    assert.equal((await session.exec('true')).exitCode, 0);
    assert.equal(calls, 3);
  });

  test('writes before the task are staged; file operations after it are commands in the task', async () => {
    const session = await sandbox().openSession(spec({ files: [] }));
    await session.writeFile('notes/a.txt', 'hello');
    await assert.rejects(session.writeFile('../escape', 'x'), /refused path/);
    await assert.rejects(session.readFile('/etc/passwd'), (err: Error) => err.name === 'SandboxPathError');
    await assert.rejects(session.listFiles('a/../../b'), /refused path/);
    assert.equal(ecsMock.commandCalls(RunTaskCommand).length, 0);

    results.set(resultKey(1), { value: { ...okResult, stdout: Buffer.from('hello').toString('base64') } });
    assert.equal(String(await session.readFile('notes/a.txt')), 'hello');
    assert.deepEqual(manifestUploaded().files, [
      { path: 'notes/a.txt', url: 'https://signed.example/GET/sandbox-inputs/req-0b7e/files/0' },
    ]);
    results.set(resultKey(2), { value: { ...okResult, stdout: '' } });
    await session.writeFile("it's/b.bin", Buffer.from([0, 255, 1]));
    results.set(resultKey(3), { value: { ...okResult, stdout: './notes/a.txt\0./b\0./a z\0' } });
    assert.deepEqual(await session.listFiles(), ['a z', 'b', 'notes/a.txt']);
    results.set(resultKey(4), {
      value: { ...okResult, exitCode: 2, stdout: '', stderrTail: 'not a regular file\n' },
    });
    await assert.rejects(session.readFile('notes'), (err: Error) => {
      assert.equal(err.name, 'SandboxPathError');
      assert.match(err.message, /readFile "notes": not a regular file/);
      return true;
    });
    assert.equal(ecsMock.commandCalls(RunTaskCommand).length, 1);

    // The first file operation started the task: it rode in the manifest.
    const [read, write, list, read2] = [manifestUploaded().first, ...commandsUploaded().map((c) => c.value)];
    assert.ok(read && 'command' in read && write && 'command' in write && list && 'command' in list);
    assert.match(read.command, /base64 -w 0 < "\$f"$/);
    assert.ok(read.command.startsWith("f='notes/a.txt';"));
    assert.ok(write.command.startsWith(`f='it'\\''s/b.bin';`), write.command);
    assert.equal(write.stdin, Buffer.from([0, 255, 1]).toString('base64'));
    assert.ok(list.command.startsWith("d='.';"));
    assert.ok(read2 && 'command' in read2);
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

  test('close sends the stop command and stops a task still running after an error', async () => {
    ecsMock.on(DescribeTasksCommand).rejects(new Error('throttled'));
    const session = await sandbox().openSession(spec());
    await assert.rejects(session.exec('true'), /throttled/);
    await session.close();
    assert.deepEqual(commandsUploaded().at(-1), {
      key: 'sandbox-inputs/req-0b7e/exec-2.json',
      value: { v: 2, stop: true },
    });
    assert.deepEqual(
      ecsMock.commandCalls(StopTaskCommand).map((c) => c.args[0].input),
      [{ cluster: 'agenthost-sandbox', task: TASK_ARN, reason: 'agenthost: session closed' }],
    );
    await assert.rejects(session.exec('true'), /session is closed/);
  });

  test('a command marked last ends the run in the runner: no stop object, and nothing but close may follow', async () => {
    results.set(resultKey(1), { value: okResult });
    const session = await sandbox().openSession(spec());
    const r = await session.exec('node index.js', { stdin: '{}', last: true });
    assert.equal(r.exitCode, 0);
    assert.deepEqual(
      { ...manifestUploaded().first, killAtMs: 0 },
      {
        v: 2,
        command: 'node index.js',
        stdin: '{}',
        killAtMs: 0,
        last: true,
      },
    );
    // One command, so one slot: its result's PUT URL, not maxExecs pairs of URLs to sign.
    assert.deepEqual(manifestUploaded().execs, [
      { commandUrl: '', resultUrl: 'https://signed.example/PUT/sandbox-results/req-0b7e/exec-1.json' },
    ]);
    await assert.rejects(session.exec('true'), /has run its last command/);
    await assert.rejects(session.readFile('out.txt'), /has run its last command/);
    await session.close();
    assert.deepEqual(commandsUploaded(), [], 'neither a command object nor a stop');
    // An own task still gets its StopTask (it exits by itself; this makes sure).
    assert.equal(ecsMock.commandCalls(StopTaskCommand).length, 1);
    // What the run wrote to S3: its inputs, manifest and env file only, every one deleted at close.
    const written = s3Mock.commandCalls(PutObjectCommand).map((c) => String(c.args[0].input.Key));
    assert.deepEqual(written.sort(), [
      'sandbox-inputs/req-0b7e/bundle.tar.gz',
      'sandbox-inputs/req-0b7e/files/0',
      'sandbox-inputs/req-0b7e/run.json',
      'sandbox-inputs/req-0b7e/runner.cjs',
      'sandbox-inputs/req-0b7e/task.env',
    ]);
  });

  test("an agent version's bundle is read where the store keeps it: no copy a run, and a payload's key never", async () => {
    results.set(resultKey(1), { value: okResult });
    const key = 'bundles/acme/tool/v3.tar.gz';
    const sha256 = createHash('sha256').update('bundle-bytes').digest('hex');
    const session = await sandbox().openSession(
      spec({ bundle: { data: Buffer.from('bundle-bytes'), format: 'tar.gz', key, sha256 } }),
    );
    await session.exec('true', { last: true });
    await session.close();
    assert.deepEqual(
      manifestUploaded().bundle,
      { url: `https://signed.example/GET/${key}`, format: 'tar.gz', sha256 },
      'the runner checks what it reads against the digest the run began with',
    );
    const written = s3Mock.commandCalls(PutObjectCommand).map((c) => String(c.args[0].input.Key));
    assert.ok(!written.some((k) => k.includes('bundle')), written.join(', '));
    const deleted = s3Mock
      .commandCalls(DeleteObjectsCommand)
      .flatMap((c) => c.args[0].input.Delete?.Objects ?? [])
      .map((o) => o.Key);
    assert.ok(!deleted.includes(key), 'the stored bundle outlives the run');

    // A key that is not an agent version's (a payload's) is copied like any other bytes.
    s3Mock.resetHistory();
    signed.length = 0;
    const other = await sandbox().openSession(
      spec({
        bundle: {
          data: Buffer.from('x'),
          format: 'tar.gz',
          key: 'bundles/payloads/answers/req-1.json',
          sha256: createHash('sha256').update('x').digest('hex'),
        },
      }),
    );
    await other.exec('true', { last: true });
    await other.close();
    assert.ok(!signed.some((x) => x.key.startsWith('bundles/')));
    assert.deepEqual(manifestUploaded().bundle, {
      url: 'https://signed.example/GET/sandbox-inputs/req-0b7e/bundle.tar.gz',
      format: 'tar.gz',
    });
  });

  test('createEcsSandbox names every missing setting', () => {
    assert.throws(
      () => createEcsSandbox({ awsRegion: 'eu-west-1', bundleBucket: 'b', sandboxCluster: 'c' }),
      /PLATFORM_SANDBOX_TASK_DEFINITION, PLATFORM_SANDBOX_SUBNETS, PLATFORM_SANDBOX_SECURITY_GROUPS, PLATFORM_SANDBOX_RUNNER_FILE, PLATFORM_SANDBOX_INPUTS_KEY not set/,
    );
    const complete = {
      awsRegion: 'eu-west-1',
      bundleBucket: 'b',
      sandboxCluster: 'c',
      sandboxTaskDefinition: TASK_DEFINITION,
      sandboxSubnets: 'subnet-a, subnet-b',
      sandboxSecurityGroups: ['sg-1'],
      sandboxInputsKey: INPUTS_KEY,
    };
    assert.throws(
      () => createEcsSandbox({ ...complete, sandboxRunnerFile: '/nonexistent/sandbox-runner.cjs' }),
      /The ECS sandbox's runner cannot be read from \/nonexistent\/sandbox-runner\.cjs/,
    );
    const dir = mkdtempSync(join(tmpdir(), 'agenthost-runner-file-'));
    try {
      writeFileSync(join(dir, 'sandbox-runner.cjs'), RUNNER);
      const ok = createEcsSandbox({ ...complete, sandboxRunnerFile: join(dir, 'sandbox-runner.cjs') });
      assert.equal(ok.kind, 'ecs');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
    // An agent version's bundle may be read (the run's task reads it where it is stored), never
    // written; a payload, or any other key, is signed for nothing.
    const bundle = new URL(await sign('GET', 'bundles/acme/tool/v1.tar.gz', 300));
    assert.equal(bundle.pathname, '/bundles/acme/tool/v1.tar.gz');
    await assert.rejects(sign('PUT', 'bundles/acme/tool/v1.tar.gz', 300), /will not sign/);
    await assert.rejects(sign('GET', 'bundles/payloads/answers/req-1.json', 300), /will not sign/);
    await assert.rejects(sign('GET', 'bundles/acme/../x/v1.tar.gz', 300), /will not sign/);
    await assert.rejects(sign('GET', 'secrets/acme.json', 300), /will not sign/);
  });
});

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
    assert.equal(result.timedOut, true);
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
