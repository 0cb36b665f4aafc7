/**
 * shared/iso-time.ts gives what Date gives: isoString is toISOString, isoDay its first ten
 * characters and parseIsoTime Date.parse, for times in the day it keeps, in others, far from now
 * (years past 9999 and before 1970), for an invalid Date (the same RangeError) and for texts that
 * are not the short form or not a time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isoDay, isoString, parseIsoTime } from '../../functions/shared/iso-time.ts';

const same = (a: number, b: number) =>
  assert.ok(a === b || (Number.isNaN(a) && Number.isNaN(b)), `${a} ≠ ${b}`);

describe('iso-time', () => {
  it('writes and reads what Date writes and reads, near now and far from it', () => {
    const now = Date.now();
    // A seeded walk: reproducible, and it crosses days back and forth.
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let i = 0; i < 50_000; i++) {
      const ms =
        i % 10 === 9 ? Math.floor((next() - 0.3) * 4e14) : now + Math.floor((next() - 0.5) * 4 * 86_400_000);
      const date = new Date(ms);
      const iso = date.toISOString();
      assert.equal(isoString(date), iso);
      assert.equal(isoDay(date), iso.slice(0, 10));
      same(parseIsoTime(iso), Date.parse(iso));
    }
    for (const ms of [
      0, 86_399_999, 86_400_000, 253_402_300_799_999, 253_402_300_800_000, -1, 8.64e15, -8.64e15,
    ]) {
      const date = new Date(ms);
      assert.equal(isoString(date), date.toISOString());
      same(parseIsoTime(date.toISOString()), ms);
    }
  });

  it('throws Date’s RangeError for an invalid Date', () => {
    assert.throws(() => isoString(new Date(Number.NaN)), RangeError);
    assert.throws(() => isoDay(new Date(Number.NaN)), RangeError);
  });

  it('reads any other text as Date.parse does', () => {
    isoString(new Date('2026-11-28T01:00:00.000Z'));
    for (const text of [
      '2026-11-28T24:00:00.000Z',
      '2026-11-28T23:59:60.000Z',
      '2026-11-28T23:60:00.000Z',
      '2026-11-28Tab:00:00.000Z',
      '2026-11-28T10:00:00.000+',
      '2026-11-28T10:00:00,000Z',
      '2026-11-28T10:00:00.0a0Z',
      '2026-11-28T10-00:00.000Z',
      '2026-11-28T10:00:00Z',
      '2026-11-28',
      '',
      'not a time',
    ])
      same(parseIsoTime(text), Date.parse(text));
  });
});
