import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

/** The variable naming the file test processes record their times in (test/setup/file-timeline.ts). */
export const TIMELINE_ENV = 'TEST_TIMELINE';

/** One test process's line in that file. */
export interface FileTimeline {
  file: string;
  startMs: number;
  endMs: number;
  /** CPU of the test process itself. */
  selfCpuMs: number;
  /** CPU of the children it waited for (Linux's /proc; 0 elsewhere). */
  childrenCpuMs: number;
}

/**
 * The summary of a `TEST_TIMELINE` run (test/setup/file-timeline.ts): the run's span, the CPU its
 * test processes and their children used (in cores, over that span), and the files that held a
 * slot longest, with their CPU: a file with much wall time and little CPU waits (a deployment
 * starting, a timeout on the cloud's clock); one with much CPU works.
 */
export function timelineSummary(path: string, root: string, top = 20): string {
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as FileTimeline);
  if (lines.length === 0) return `${path}: no test process recorded anything\n`;
  const start = Math.min(...lines.map((l) => l.startMs));
  const end = Math.max(...lines.map((l) => l.endMs));
  const cpu = lines.reduce((s, l) => s + l.selfCpuMs + l.childrenCpuMs, 0);
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  // A group's entry file lives in a temporary directory: its base name says which group.
  const name = (file: string) =>
    file.includes('agenthost-test-groups-') ? (file.split('/').at(-1) ?? file) : relative(root, file);
  const rows = [...lines]
    .sort((a, b) => b.endMs - b.startMs - (a.endMs - a.startMs))
    .slice(0, top)
    .map(
      (l) =>
        `| ${name(l.file)} | ${seconds(l.startMs - start)} | ${seconds(l.endMs - l.startMs)} | ${seconds(l.selfCpuMs)} | ${seconds(l.childrenCpuMs)} |`,
    );
  return [
    `Test processes: ${lines.length}, from the first's start to the last's end ${seconds(end - start)} s;`,
    `CPU ${seconds(cpu)} s (theirs and their waited-for children's), ${(cpu / (end - start)).toFixed(2)} cores on average.`,
    '',
    `| the ${top} longest in wall time | started at s | wall s | CPU s | children's CPU s |`,
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
  ].join('\n');
}
