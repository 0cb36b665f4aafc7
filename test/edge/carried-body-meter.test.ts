/**
 * carried-body-meter.ts's sizing of one request's body under a route's limit (bodySizing): the
 * refusal a declared length alone earns (AWS's past the event budget, whatever the route's limit;
 * else the route's), the refusals for what reading finds, and when the meter scans text. How the
 * meter counts escaping and base64 is test/edge/event-body-budget.test.ts's.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { base64Bytes, bodySizing, CarriedBodyMeter } from '../../functions/edge/carried-body-meter.ts';
import { EVENT_BODY_TOO_LARGE_MESSAGE } from '../../functions/edge/event-body-budget.ts';
import { EVENT_BODY_BYTES, MAX_BINARY_BODY_BYTES } from '../../functions/shared/byte-limits.ts';
import type { PlatformError } from '../../functions/shared/errors.ts';

const JSON_TYPE = 'application/json';
const ZIP = 'application/zip';
const HUGE = 100 * 1024 * 1024;

function routeRefusal(err: PlatformError | undefined, limit: number) {
  assert.equal(err?.code, 'DOCUMENT_TOO_LARGE');
  assert.equal(err?.details?.limit_bytes, limit);
  assert.deepEqual(err?.details?.fields, [{ field: 'body', message: `must be at most ${limit} bytes` }]);
}
function eventRefusal(err: PlatformError | undefined) {
  assert.equal(err?.code, 'DOCUMENT_TOO_LARGE');
  assert.equal(err?.message, EVENT_BODY_TOO_LARGE_MESSAGE);
}

describe('bodySizing', () => {
  it('no declared length: nothing refused before reading', () => {
    assert.equal(bodySizing(undefined, JSON_TYPE, 10).declaredRefusal, undefined);
  });

  it('a declared length past the route’s limit is the route’s refusal; at the limit, none', () => {
    routeRefusal(bodySizing('11', JSON_TYPE, 10).declaredRefusal, 10);
    assert.equal(bodySizing('10', JSON_TYPE, 10).declaredRefusal, undefined);
    assert.equal(bodySizing('0', JSON_TYPE, 10).declaredRefusal, undefined);
  });

  it('past the event budget it is AWS’s refusal, even under a larger limit of the route’s', () => {
    eventRefusal(bodySizing(String(EVENT_BODY_BYTES + 1), JSON_TYPE, HUGE).declaredRefusal);
    assert.equal(bodySizing(String(EVENT_BODY_BYTES), JSON_TYPE, HUGE).declaredRefusal, undefined);
    // Both past: the budget's answer, as API Gateway gives it before the function runs.
    eventRefusal(bodySizing(String(EVENT_BODY_BYTES + 1), JSON_TYPE, 10).declaredRefusal);
  });

  it('a binary type is counted as base64 against the budget, its parameters aside', () => {
    const over = String(MAX_BINARY_BODY_BYTES + 1);
    eventRefusal(bodySizing(over, ZIP, HUGE).declaredRefusal);
    eventRefusal(bodySizing(over, 'Application/ZIP; name=a', HUGE).declaredRefusal);
    assert.equal(bodySizing(String(MAX_BINARY_BODY_BYTES), ZIP, HUGE).declaredRefusal, undefined);
    assert.equal(bodySizing(over, JSON_TYPE, HUGE).declaredRefusal, undefined);
  });

  it('a declared length that is no number refuses nothing; the read still counts', () => {
    const sizing = bodySizing('lots', JSON_TYPE, 10);
    assert.equal(sizing.declaredRefusal, undefined);
    const meter = sizing.meter();
    meter.add(Buffer.from('"\n'));
    assert.equal(meter.bytes, 4, 'scanned: escaping counted');
  });

  it('the refusals for what reading found: the route’s limit, or the event budget', () => {
    const sizing = bodySizing(undefined, JSON_TYPE, 42);
    routeRefusal(sizing.refusal('too-large'), 42);
    eventRefusal(sizing.refusal('too-large-event'));
  });

  it('each meter counts from zero, as the type says: text with escaping, binary as base64', () => {
    const text = bodySizing(undefined, JSON_TYPE, HUGE);
    const first = text.meter();
    first.add(Buffer.from('ab"'));
    assert.equal(first.bytes, 4);
    assert.equal(text.meter().bytes, 0);
    const binary = bodySizing(undefined, ZIP, HUGE).meter();
    binary.add(Buffer.from('ab"'));
    assert.equal(binary.bytes, 4);
    binary.add(Buffer.from('x'));
    assert.equal(binary.bytes, 8);
  });
});

describe('the meter', () => {
  it('does not scan text whose declared length always fits (six bytes a byte at worst)', () => {
    const fits = Math.floor(EVENT_BODY_BYTES / 6);
    const unscanned = new CarriedBodyMeter(false, fits);
    unscanned.add(Buffer.from('""'));
    assert.equal(unscanned.bytes, 2);
    const scanned = new CarriedBodyMeter(false, fits + 1);
    scanned.add(Buffer.from('""'));
    assert.equal(scanned.bytes, 4);
  });

  it('base64Bytes: four bytes for every three begun', () => {
    assert.deepEqual([0, 1, 2, 3, 4, 6].map(base64Bytes), [0, 4, 4, 4, 8, 8]);
  });
});
