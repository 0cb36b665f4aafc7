// bench/report.ts: the command line under each table in docs/performance.md reproduces the run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commandLine } from '../../bench/report.ts';

test('the command line names the run’s BENCH_* and PLATFORM_* settings, a checkout as <checkout>', () => {
  const saved = { ...process.env };
  try {
    for (const name of Object.keys(process.env))
      if (name.startsWith('BENCH_') || name.startsWith('PLATFORM_')) delete process.env[name];
    process.env.BENCH_ROUNDS = '9';
    process.env.BENCH_BASELINE_DIR = '/tmp/somewhere';
    // A platform setting changes what the platforms the bench starts do (they inherit it).
    process.env.PLATFORM_TRACES = 'off';
    process.env.UNRELATED = 'x';
    assert.equal(
      commandLine('calls'),
      'BENCH_BASELINE_DIR=<checkout> BENCH_ROUNDS=9 PLATFORM_TRACES=off npm run bench:calls',
    );
  } finally {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  }
});
