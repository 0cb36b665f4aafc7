import { appendFileSync, readFileSync } from 'node:fs';
import { statWaitedCpuMs } from '../../bench/proc-stats.ts';
import { type FileTimeline, TIMELINE_ENV } from './timeline-summary.ts';

/**
 * `TEST_TIMELINE=<file> npm test`: what each test process cost, for finding where the suite's time
 * goes. test/setup/run.ts preloads this module into every test process (`--import`) when the
 * variable is set; at its exit the process appends one JSON line to the file: its test file (or
 * group of files, test/setup/shared-processes.ts), when it started and ended, and the CPU time of
 * the process and of the children it waited for (the platform processes, emulated Lambdas and
 * CLIs it started; a detached one, such as Chromium or a sandbox's network helper, is not
 * counted). test/setup/timeline-summary.ts prints them at the end of the run. Only the test
 * processes import this module: its top level is the recording.
 */

const out = process.env[TIMELINE_ENV];
const file = process.argv.slice(1).find((a) => /\.test\.(ts|mjs)$/.test(a));
if (out && file) {
  const startMs = Date.now();
  process.on('exit', () => {
    const cpu = process.cpuUsage();
    const line: FileTimeline = {
      file,
      startMs,
      endMs: Date.now(),
      selfCpuMs: Math.round((cpu.user + cpu.system) / 1000),
      childrenCpuMs: Math.round(statWaitedCpuMs(waitedStat())),
    };
    appendFileSync(out, `${JSON.stringify(line)}\n`);
  });
}

/** This process's /proc stat line (Linux; empty elsewhere, which counts as no CPU). */
function waitedStat(): string {
  try {
    return readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return '';
  }
}
