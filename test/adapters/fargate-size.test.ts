import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DEFAULT_RUNNER_SIZE,
  FARGATE_SIZES,
  fargateSize,
} from '../../functions/adapters/aws/fargate-size.ts';

/**
 * A runner's size: the smallest Fargate size that fits what its agent declares,
 * the default (a quarter vCPU, 1 GiB) where it declares nothing, and only Fargate's own combinations.
 */

describe('the smallest Fargate size that fits', () => {
  test('nothing declared: the default, a quarter vCPU and 1 GiB', () => {
    assert.deepEqual(fargateSize(), { cpu: 256, memory: 1024 });
    assert.deepEqual(fargateSize({}), DEFAULT_RUNNER_SIZE);
  });

  test('both declared: the cheapest size with at least as much of each', () => {
    assert.deepEqual(fargateSize({ cpu: 0.25, memoryMb: 512 }), { cpu: 256, memory: 512 });
    assert.deepEqual(fargateSize({ cpu: 0.25, memoryMb: 3000 }), { cpu: 512, memory: 3072 });
    assert.deepEqual(fargateSize({ cpu: 0.5, memoryMb: 512 }), { cpu: 512, memory: 1024 });
    assert.deepEqual(fargateSize({ cpu: 1, memoryMb: 2048 }), { cpu: 1024, memory: 2048 });
    assert.deepEqual(fargateSize({ cpu: 2, memoryMb: 1024 }), { cpu: 2048, memory: 4096 });
    assert.deepEqual(fargateSize({ cpu: 0.5, memoryMb: 9000 }), { cpu: 2048, memory: 9216 });
  });

  test('one declared: the other is the default’s', () => {
    assert.deepEqual(fargateSize({ cpu: 0.25 }), { cpu: 256, memory: 1024 });
    assert.deepEqual(fargateSize({ memoryMb: 512 }), { cpu: 256, memory: 512 });
    assert.deepEqual(fargateSize({ memoryMb: 4096 }), { cpu: 512, memory: 4096 });
    assert.deepEqual(fargateSize({ cpu: 1 }), { cpu: 1024, memory: 2048 });
  });

  test('larger than Fargate has: none', () => {
    assert.equal(fargateSize({ cpu: 32 }), undefined);
    assert.equal(fargateSize({ memoryMb: 200_000 }), undefined);
  });

  test('only Fargate’s combinations, each CPU with its memory range', () => {
    const ok = (cpu: number, memory: number) =>
      FARGATE_SIZES.some((s) => s.cpu === cpu && s.memory === memory);
    assert.ok(ok(256, 2048) && !ok(256, 3072));
    assert.ok(ok(512, 4096) && !ok(512, 5120));
    assert.ok(ok(4096, 30720) && !ok(4096, 31744));
    assert.ok(ok(8192, 20480) && !ok(8192, 17408), '8 vCPU: 4 GiB steps');
    for (const s of FARGATE_SIZES)
      assert.equal(fargateSize({ cpu: s.cpu / 1024, memoryMb: s.memory })?.cpu, s.cpu);
  });
});
