/**
 * The ECS sandbox (as ecs-sandbox.test.ts) when a run cannot start or its task does not answer: too
 * little time left, ECS refusing, a task stopped without a result, a runner that failed, a result
 * S3 hides as AccessDenied.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { DescribeTasksCommand, RunTaskCommand, StopTaskCommand } from '@aws-sdk/client-ecs';
import { DeleteObjectsCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { SandboxCapacityError, SandboxUnavailableError } from '../../functions/ports/sandbox.ts';
import {
  body,
  commandsUploaded,
  ecsMock,
  okResult,
  resetSandboxMocks,
  resultKey,
  results,
  s3Mock,
  sandbox,
  spec,
  TASK_DEFINITION,
  task,
} from '../helpers/ecs-sandbox-bench.ts';

beforeEach(resetSandboxMocks);

describe('EcsSandbox: one long-lived Fargate task per session', () => {
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
});
