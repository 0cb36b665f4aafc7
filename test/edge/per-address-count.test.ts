import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PerAddressCount } from '../../functions/edge/per-address-count.ts';

/*
 * How many of something each address holds at once (functions/edge/per-address-count.ts): up to
 * its maximum, each place given back once however often its release is called.
 */

describe('per-address count (edge unit)', () => {
  it('gives an address its maximum of places, none past it, and other addresses their own', () => {
    const count = new PerAddressCount(3);
    const held = [count.take('a'), count.take('a'), count.take('a')];
    assert.ok(held.every((release) => typeof release === 'function'));
    assert.equal(count.take('a'), undefined);
    assert.equal(typeof count.take('b'), 'function');
  });

  it('frees a place given back, once however often it is given back', () => {
    const count = new PerAddressCount(2);
    const first = count.take('a');
    const second = count.take('a');
    assert.equal(count.take('a'), undefined);
    first?.();
    first?.();
    first?.();
    assert.equal(typeof count.take('a'), 'function', 'the place given back');
    assert.equal(count.take('a'), undefined, 'a release called again freed no other place');
    second?.();
    assert.equal(typeof count.take('a'), 'function');
  });

  it('starts an address afresh once it gave every place back', () => {
    const count = new PerAddressCount(1);
    for (let i = 0; i < 3; i++) {
      const release = count.take('a');
      assert.equal(typeof release, 'function', `round ${i}`);
      assert.equal(count.take('a'), undefined);
      release?.();
    }
  });

  it('gives nothing with a maximum of 0', () => {
    assert.equal(new PerAddressCount(0).take('a'), undefined);
  });
});
