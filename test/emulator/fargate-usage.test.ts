import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Task } from '@aws-sdk/client-ecs';
import { EcsTaskLedger, type LedgerTask } from '../../functions/emulator/ecs-task-ledger.ts';
import { fargateUsage } from '../../functions/emulator/fargate-usage.ts';

/**
 * Fargate usage as AWS bills it (the cost bench's Fargate side), from DescribeTasks' answers:
 * from the image pull's start to the task's stop, rounded up to the second, at least a minute, by
 * capacity provider, within a window; and the emulated account keeps its stopped tasks listable for
 * the hour ECS promises, so that usage can be read after the fact. In memory: the answers are built
 * here (test/emulator/ecs-account-tasks.test.ts reads real ones over the wire).
 */

const T0 = Date.parse('2026-11-27T12:00:00Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000);

describe('fargateUsage: what Fargate bills for the tasks DescribeTasks shows', () => {
  const window = { from: T0, to: T0 + 3600_000 };

  it('bills from the pull to the stop, rounded up to the second, a minute at least, by capacity provider', () => {
    const tasks: Task[] = [
      // 1 vCPU, 2 GB for 90.2 s: 91 s.
      { cpu: '1024', memory: '2048', pullStartedAt: at(10), startedAt: at(30), stoppedAt: at(100.2) },
      // Half a vCPU, 1 GB for 5 s: billed a minute.
      { cpu: '512', memory: '1024', pullStartedAt: at(200), startedAt: at(202), stoppedAt: at(205) },
      // Spot, a quarter vCPU, half a GB, 120 s; no pull reported: from its start.
      {
        cpu: '256',
        memory: '512',
        capacityProviderName: 'FARGATE_SPOT',
        startedAt: at(300),
        stoppedAt: at(420),
      },
      // Stopped before it pulled anything: not billed.
      { cpu: '4096', memory: '8192', createdAt: at(0), stoppedAt: at(1) },
    ];
    const usage = fargateUsage(tasks, window);
    assert.deepEqual(usage.FARGATE, { tasks: 2, vcpuSeconds: 91 + 0.5 * 60, gbSeconds: 2 * 91 + 1 * 60 });
    assert.deepEqual(usage.FARGATE_SPOT, { tasks: 1, vcpuSeconds: 0.25 * 120, gbSeconds: 0.5 * 120 });
  });

  it('counts only what falls in the window, and a running task to its end', () => {
    const tasks: Task[] = [
      // Began 30 s before the window.
      { cpu: '1024', memory: '2048', pullStartedAt: at(-30), stoppedAt: at(60) },
      // Still running at the window's end (an hour in): billed to it.
      { cpu: '2048', memory: '4096', pullStartedAt: at(3000) },
      // Its minute ends 20 s into the next window.
      { cpu: '1024', memory: '2048', pullStartedAt: at(3560), stoppedAt: at(3565) },
      // Wholly after it.
      { cpu: '1024', memory: '2048', pullStartedAt: at(4000), stoppedAt: at(4100) },
    ];
    const usage = fargateUsage(tasks, window);
    assert.equal(usage.FARGATE.tasks, 3);
    assert.equal(usage.FARGATE.vcpuSeconds, 60 + 2 * 600 + 40);
    assert.equal(usage.FARGATE.gbSeconds, 2 * 60 + 4 * 600 + 2 * 40);
  });
});

describe("the emulated account's stopped tasks", () => {
  it('stay listed and described for an hour after they stop, then are forgotten', async () => {
    const ledger = new EcsTaskLedger({ region: 'us-east-1', accountId: '000000000000' });
    const forgotten: string[] = [];
    const task = (id: string, stoppedMinutesAgo: number | undefined): LedgerTask => {
      const arn = `arn:aws:ecs:us-east-1:000000000000:task/c/${id}`;
      const stoppedAt = stoppedMinutesAgo === undefined ? undefined : Date.now() - stoppedMinutesAgo * 60_000;
      const state = {
        lastStatus: stoppedAt === undefined ? 'RUNNING' : 'STOPPED',
        desiredStatus: stoppedAt === undefined ? ('RUNNING' as const) : ('STOPPED' as const),
        ...(stoppedAt !== undefined ? { stoppedAt } : {}),
      };
      return {
        arn,
        clusterArn: ledger.clusterArn('c'),
        family: 'f',
        cpu: 1024,
        capacityProviderName: 'FARGATE',
        createdAt: Date.now() - 2 * 3600_000,
        state: () => state,
        describe: () => ({ taskArn: arn }),
        forget: () => forgotten.push(id),
      };
    };
    for (const t of [task('running', undefined), task('recent', 59), task('old', 61)]) ledger.add(t);
    const ops = ledger.operations();
    const list = (desiredStatus: string) =>
      (ops.ListTasks({ cluster: 'c', desiredStatus }) as { taskArns: string[] }).taskArns.map((a) =>
        a.split('/').pop(),
      );
    assert.deepEqual(list('STOPPED'), ['recent']);
    assert.deepEqual(list('RUNNING'), ['running']);
    assert.deepEqual(forgotten, ['old']);
    const described = ops.DescribeTasks({ cluster: 'c', tasks: ['recent', 'old'] }) as {
      tasks: unknown[];
      failures: unknown[];
    };
    assert.equal(described.tasks.length, 1);
    assert.deepEqual(described.failures, [{ arn: 'old', reason: 'MISSING' }]);
    // Stopped tasks no longer hold vCPUs; the running one does.
    assert.equal(ledger.vcpusInUse('FARGATE'), 1);
  });
});
