// bench/same-windows.ts and its rows in bench/calls-baseline.ts: the measure behind the traces
// target's figure, what tracing costs in CPU per call, read over the same windows for every platform.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { baselineComparison, type Measure, type Round } from '../../bench/calls-baseline.ts';
import { sameWindows } from '../../bench/same-windows.ts';

/** A side whose call answers `status` on the next turn of the event loop (or after `delayMs`). */
const side = (pid: number, status = 200, delayMs = 0) => ({
  pid,
  send: () =>
    new Promise<number>((resolve) =>
      delayMs > 0 ? setTimeout(() => resolve(status), delayMs) : setImmediate(() => resolve(status)),
    ),
});

test('every side is loaded at once, and each window reads every side at its start and end', async () => {
  const reads: string[] = [];
  const windows = await sameWindows(
    { a: side(1), b: side(2) },
    { concurrency: 4, windows: 3, windowMs: 30, warmup: 50 },
    (pid, calls) => {
      reads.push(`${pid}`);
      return calls;
    },
  );
  assert.equal(windows.length, 3);
  for (const w of windows) {
    // Both sides answered calls within the same window: they ran at the same time.
    assert.ok(w.a.after > w.a.before, `a answered calls in the window: ${JSON.stringify(w)}`);
    assert.ok(w.b.after > w.b.before, `b answered calls in the window: ${JSON.stringify(w)}`);
  }
  // The warm-up came first: each side had answered its 50 calls before the first window began.
  assert.ok((windows[0] as (typeof windows)[number]).a.before >= 50);
  assert.ok((windows[0] as (typeof windows)[number]).b.before >= 50);
  // A window's end is the next one's start or later, never before it.
  for (let i = 1; i < windows.length; i++)
    assert.ok(
      (windows[i] as (typeof windows)[number]).a.before >=
        (windows[i - 1] as (typeof windows)[number]).a.after,
    );
  assert.deepEqual(reads.slice(0, 2), ['1', '2']);
});

test('the warm-up waits for the slowest side', async () => {
  const windows = await sameWindows(
    { fast: side(1), slow: side(2, 200, 5) },
    { concurrency: 2, windows: 1, windowMs: 10, warmup: 40 },
    (_, calls) => calls,
  );
  assert.ok((windows[0] as (typeof windows)[number]).slow.before >= 40);
});

test('a call that throws stops the measure, naming its side; none is left in flight', async () => {
  let inFlight = 0;
  let calls = 0;
  const flaky = {
    pid: 2,
    send: async () => {
      inFlight++;
      await new Promise((r) => setTimeout(r, 2));
      inFlight--;
      if (++calls === 30) throw new Error('other side closed');
      return 200;
    },
  };
  await assert.rejects(
    sameWindows(
      { good: side(1), flaky },
      { concurrency: 4, windows: 3, windowMs: 60_000, warmup: 10 },
      (_, n) => n,
    ),
    (err: Error) =>
      err.message === 'a bench call to flaky failed' && String(err.cause).includes('other side closed'),
  );
  // Every call had settled when the measure rejected.
  assert.equal(inFlight, 0);
});

test('a call that fails in a window ends that window at once', async () => {
  // It fails once the window has begun (both sides read at its start), not after a fixed time: on
  // a loaded machine the warm-up (10 calls, checked every 100 ms) outlasted 300 ms.
  const started = performance.now();
  let windowsBegun = 0;
  const failsLater = {
    pid: 2,
    send: () => new Promise<number>((resolve) => setTimeout(() => resolve(windowsBegun >= 2 ? 503 : 200), 1)),
  };
  await assert.rejects(
    sameWindows(
      { good: side(1), failsLater },
      { concurrency: 2, windows: 1, windowMs: 60_000, warmup: 10 },
      (_, n) => {
        windowsBegun++;
        return n;
      },
    ),
    /a bench call to failsLater answered 503/,
  );
  // The window had begun (both sides read at its start), and did not run its minute.
  assert.equal(windowsBegun, 2);
  assert.ok(performance.now() - started < 5_000);
});

test('a call that fails stops the measure at once, naming its side', async () => {
  const started = performance.now();
  await assert.rejects(
    sameWindows(
      { good: side(1), broken: side(2, 502) },
      { concurrency: 2, windows: 100, windowMs: 1000, warmup: 10 },
      (_, calls) => calls,
    ),
    /a bench call to broken answered 502/,
  );
  // Not after its hundred windows of a second: the failure ended the wait.
  assert.ok(performance.now() - started < 5_000);
});

test('the table gives the same windows’ ratios: the median of every window’s, with the calibration row', () => {
  const measure: Measure = { p50: 1, p99: 2, perSecond: 100, cpuMsPerCall: 1 };
  const round = (on: number[], off: number[], again: number[]): Round => ({
    results: new Map([
      [
        16,
        new Map([
          ['agenthost', [measure]],
          ['traces off', [measure]],
          ['direct', [measure]],
        ]),
      ],
    ]),
    rss: new Map([
      ['agenthost', [100]],
      ['traces off', [100]],
    ]),
    windows: new Map([
      ['agenthost', on],
      ['traces off', off],
      ['again', again],
    ]),
  });
  const table = baselineComparison(
    [round([1.04, 1.02], [1, 1], [1.03, 1.01]), round([1.2, 1.04], [1, 1], [1.2, 1.0])],
    {
      levels: [16],
      rssLevel: 64,
      baselineName: 'traces off',
      intro: 'Run.',
      sameWindows: { level: 16, calibration: 'again' },
    },
  );
  const row = (start: string) => table.split('\n').find((l) => l.startsWith(start)) ?? '';
  // Window ratios 1.04, 1.02, 1.20, 1.04: their median 1.04, each round's 1.03 and 1.12.
  assert.match(row('| "agenthost" against "traces off"'), /\| 1\.040 \| 1\.03, 1\.12 \| estimate \|$/);
  // 1.03, 1.01, 1.20, 1.00: 1.02.
  assert.match(row('| "again" against "traces off"'), /\| 1\.020 \| 1\.02, 1\.10 \| estimate \|$/);
  // Both pooled, the verdict's row: 1.04, 1.02, 1.03, 1.01 and 1.20, 1.04, 1.20, 1.00: 1.035.
  assert.match(row('| both traced against "traces off", pooled'), /\| 1\.035 \| 1\.02, 1\.12 \| yes \|$/);
  // The calibration: 1.04/1.03, 1.02/1.01, 1.20/1.20, 1.04/1.00: about 1.01.
  assert.match(row('| "agenthost" against "again"'), /\| 1\.0[01]\d \| [\d., ]+ \| calibration \|$/);
  assert.match(table, /Over the same windows \(4 in all/);
  // Over 5% the worse way: not within.
  const over = baselineComparison([round([1.06, 1.07], [1, 1], [1.06, 1.08])], {
    levels: [16],
    rssLevel: 64,
    baselineName: 'traces off',
    intro: 'Run.',
    sameWindows: { level: 16, calibration: 'again' },
  });
  assert.match(over, /\| both traced against "traces off", pooled \|[^\n]*\| \*\*no\*\* \|/);
});
