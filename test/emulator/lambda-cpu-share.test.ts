/**
 * With PLATFORM_EMULATOR_LAMBDA_CPU=share, an emulated Lambda instance gets the CPU Lambda gives
 * its function's memory (one vCPU at 1,769 MB): a handler that needs 150 ms of CPU takes at least
 * four times that long at 442 MB (a quarter of a vCPU), however idle this machine is, since the
 * kernel's CFS quota, not the load, holds it back. The bound is the quota's, so a loaded machine
 * only makes the handler slower, never the test wrong. Without the option the instance's CPU is
 * not held (the test suite's default): its group is not made.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openCpuShares, vcpusOf } from '../../functions/emulator/lambda-cpu-share.ts';
import { type EmulatedFunction, LambdaHost } from '../../functions/emulator/lambda-host.ts';

const CPU_MS = 150;

/** Where this host's groups would be, on cgroup v1 or v2. */
function groupsOfThisHost(): string | undefined {
  for (const root of ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup']) {
    const dir = join(root, `agenthost-lambda-${process.pid}`);
    if (existsSync(dir)) return dir;
  }
  return undefined;
}

describe('the emulated Lambda: the CPU share of its memory', () => {
  let dir: string;
  const fn = (name: string, memoryMb: number): EmulatedFunction => ({
    name,
    logName: name,
    arn: `arn:aws:lambda:us-east-1:000000000000:function:${name}`,
    assetDir: dir,
    handler: 'index.handler',
    timeoutSeconds: 30,
    memoryMb,
    environment: { PATH: process.env.PATH ?? '' },
    maxInstances: 1,
  });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agenthost-lambda-cpu-'));
    // Spins until it has used `cpuMs` of CPU; answers the wall-clock time that took.
    await writeFile(
      join(dir, 'index.mjs'),
      [
        'export const handler = async ({ cpuMs }) => {',
        '  const start = performance.now();',
        '  const used = process.cpuUsage();',
        '  while (true) {',
        '    const { user, system } = process.cpuUsage(used);',
        '    if ((user + system) / 1000 >= cpuMs) break;',
        '  }',
        '  return performance.now() - start;',
        '};',
        '',
      ].join('\n'),
    );
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('gives a function a vCPU at 1,769 MB and its memory’s share of one at any other', () => {
    assert.equal(vcpusOf(1769), 1);
    assert.equal(vcpusOf(442.25), 0.25);
    assert.ok(vcpusOf(10_240) > 5.7 && vcpusOf(10_240) <= 6, 'Lambda’s largest: up to six');
  });

  it('holds a quarter-vCPU function to a quarter of a core, and removes its groups on close', async () => {
    const host = new LambdaHost([fn('quarter', 442)], () => undefined, undefined, openCpuShares());
    try {
      const groups = groupsOfThisHost();
      assert.ok(groups, 'the host made its parent group');
      const wallMs = (await host.invoke('quarter', { cpuMs: CPU_MS })) as number;
      const [instance] = readdirSync(groups, { withFileTypes: true }).filter((d) => d.isDirectory());
      assert.ok(instance, 'the instance has a group of its own');
      const quota = ['cpu.cfs_quota_us', 'cpu.max']
        .map((f) => join(groups, instance.name, f))
        .filter(existsSync)
        .map((f) => Number.parseInt(readFileSync(f, 'utf8'), 10))[0];
      assert.equal(quota, Math.round(100_000 * vcpusOf(442)), 'its quota is its share of each 100 ms');
      // 150 ms of CPU at a quarter of a core: at least 600 ms, less the first period's burst.
      assert.ok(
        wallMs >= (CPU_MS / vcpusOf(442)) * 0.9 - 100,
        `${wallMs.toFixed(0)} ms for ${CPU_MS} ms of CPU`,
      );
    } finally {
      await host.close();
    }
    assert.equal(groupsOfThisHost(), undefined, 'the host removed its groups');
  });

  it('leaves the CPU alone without the option', async () => {
    const host = new LambdaHost([fn('whole', 442)], () => undefined);
    try {
      await host.invoke('whole', { cpuMs: 10 });
      assert.equal(groupsOfThisHost(), undefined);
    } finally {
      await host.close();
    }
  });
});
