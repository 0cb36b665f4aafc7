import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { IDLE_WAIT_BOUNDS, idleWaitMs } from '../../functions/adapters/aws/runner-idle-wait.ts';

/**
 * How long a bound warm runner waits for its pair's next run: a pair called
 * once keeps it 60 s, one called steadily twice its gap between calls, never more than 10 minutes.
 */

const MIN = 60_000;
const MAX = 10 * 60_000;

describe('a bound runner’s idle wait follows its pair’s traffic', () => {
  test('the bounds: 60 s to 10 minutes', () => {
    assert.deepEqual(IDLE_WAIT_BOUNDS, { minMs: MIN, maxMs: MAX });
  });

  test('a pair called once, or twice by chance, keeps its runner 60 s', () => {
    assert.equal(idleWaitMs([-1, -1]), MIN, 'no call before');
    assert.equal(idleWaitMs([]), MIN);
    assert.equal(idleWaitMs([4 * 60_000, -1]), MIN, 'one gap is no traffic yet');
  });

  test('a pair called steadily keeps it twice its longer recent gap, at least the minimum', () => {
    assert.equal(idleWaitMs([1000, 1000]), MIN, 'every second: the minimum is plenty');
    assert.equal(idleWaitMs([3 * 60_000, 2 * 60_000]), 6 * 60_000);
    assert.equal(idleWaitMs([2 * 60_000, 3 * 60_000]), 6 * 60_000, 'the longer of the two');
  });

  test('never more than 10 minutes; a gap longer than that is a new start', () => {
    assert.equal(idleWaitMs([8 * 60_000, 9 * 60_000]), MAX);
    assert.equal(idleWaitMs([60_000, 11 * 60_000]), MIN, 'its runner was gone: the pair starts again');
  });

  test('the minimum is configurable (PLATFORM_SANDBOX_IDLE_MIN_MS), never past the maximum', () => {
    assert.equal(idleWaitMs([-1, -1], { minMs: 2000, maxMs: MAX }), 2000);
    assert.equal(idleWaitMs([1500, 1000], { minMs: 2000, maxMs: MAX }), 3000);
    assert.equal(idleWaitMs([-1, -1], { minMs: 20 * 60_000, maxMs: MAX }), MAX);
  });
});
