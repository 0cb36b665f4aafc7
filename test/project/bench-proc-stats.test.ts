// bench/proc-stats.ts: the /proc readers the gateway bench charges each gateway's CPU and memory with.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { processTree, statCpuMs, treeCpuMs, treeRssMb } from '../../bench/proc-stats.ts';

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
