// bench/proc-stats.ts: the /proc readers the gateway bench charges each gateway's CPU and memory
// with, and the command runner bench:cli-start and bench:test-cpu time a command's CPU with.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { commandCpu, processTree, statCpuMs, treeCpuMs, treeRssMb } from '../../bench/proc-stats.ts';

test('statCpuMs adds utime and stime after a command name holding spaces and parentheses', () => {
  // Fields 3 onwards; utime is field 14 (index 11), stime field 15 (index 12).
  const rest = (utime: number, stime: number) =>
    Array.from({ length: 50 }, (_, i) => (i === 11 ? utime : i === 12 ? stime : 99)).join(' ');
  assert.ok(statCpuMs(`42 (node (a b)) ${rest(3, 7)}`) > 0);
  assert.equal(statCpuMs(`42 (node (a b)) ${rest(3, 7)}`), statCpuMs(`1 (x) ${rest(10, 0)}`));
  assert.equal(statCpuMs(`1 (x) ${rest(0, 0)}`), 0);
  assert.equal(statCpuMs(''), 0);
});

test('the tree of this process includes it and has CPU time and memory', () => {
  assert.equal(processTree(process.pid)[0], process.pid);
  assert.ok(treeCpuMs(process.pid) > 0);
  assert.ok(treeRssMb(process.pid) > 10);
});

test('commandCpu answers a command’s CPU, its child’s included, its exit code, and its output where asked', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agenthost-command-cpu-'));
  try {
    const log = join(dir, 'log');
    // The command is a shell that starts a Node spinning for 200 ms of CPU and reaps it.
    const spin = `${JSON.stringify(process.execPath)} -e "const t = process.cpuUsage(); while (process.cpuUsage(t).user < 200000); console.log('out'); console.error('err')"`;
    const t = await commandCpu(['sh', '-c', spin], { stdout: log, stderr: log });
    assert.equal(t.exit, 0);
    assert.ok(t.cpuMs >= 150, `${t.cpuMs} ms`);
    assert.ok(t.wallMs > 0);
    assert.deepEqual(readFileSync(log, 'utf8').split('\n').sort(), ['', 'err', 'out']);
    const failed = await commandCpu(['sh', '-c', 'echo no >&2; exit 3'], {
      cwd: dir,
      stderr: join(dir, 'err'),
    });
    assert.equal(failed.exit, 3);
    assert.equal(readFileSync(join(dir, 'err'), 'utf8'), 'no\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
