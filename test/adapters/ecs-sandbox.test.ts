/**
 * The ECS sandbox (functions/adapters/aws/ecs-sandbox.ts) on mocked ECS and S3: one long-lived
 * Fargate task per session, its commands, limits and deadlines, staged writes, what it refuses and
 * what it signs. Runs that cannot start or answer: ecs-sandbox-start-failures.test.ts; the runner
 * itself, and the sandbox with it end to end: ecs-sandbox-runner.test.ts.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, test } from 'node:test';
import { DescribeTasksCommand, RunTaskCommand, StopTaskCommand } from '@aws-sdk/client-ecs';
import { DeleteObjectsCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createEcsSandbox } from '../../functions/adapters/aws/ecs-sandbox.ts';
import { createS3Presigner } from '../../functions/adapters/aws/ecs-sandbox-staging.ts';
import { SANDBOX_MANIFEST_ENV } from '../../functions/containers/sandbox-protocol.ts';
import { DEFAULT_SANDBOX_LIMITS, SandboxUnavailableError } from '../../functions/ports/sandbox.ts';
import {
  commandsUploaded,
  ecsMock,
  INPUTS_KEY,
  manifestUploaded,
  okResult,
  RUNNER,
  resetSandboxMocks,
  resultKey,
  results,
  SECRET,
  s3Mock,
  sandbox,
  signed,
  spec,
  TASK_ARN,
  TASK_DEFINITION,
} from '../helpers/ecs-sandbox-bench.ts';

beforeEach(resetSandboxMocks);

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
