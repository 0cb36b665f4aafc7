import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callTime, timedByRequestId } from '../../functions/core/calls/call-time.ts';
import type { CoreDeps } from '../../functions/ports/core-deps.ts';
import {
  builtUuidV7,
  mintedRequestIdTime,
  newRequestId,
  requestIdTime,
  traceIdOfRequestId,
} from '../../functions/shared/request-ids.ts';
import { FakeClock } from '../helpers/fake-clock.ts';

/**
 * A call's time (functions/core/calls/call-time.ts): its request id's, when the platform minted the
 * id for it just before, so that its record is found from the id (docs/traces.md, "Where a trace
 * is"); else the platform clock's.
 */

const AT = Date.UTC(2026, 10, 26, 4, 1, 39, 871);
const idAt = (ms: number) => `req_${builtUuidV7(ms)}`;
const depsAt = (ms: number) => ({ clock: new FakeClock(new Date(ms)) }) as unknown as CoreDeps;

describe('the time a request id carries', () => {
  it("reads back the millisecond of an id minted here, by Node's own v7 or the one built here", () => {
    assert.equal(requestIdTime(idAt(AT)), AT);
    const before = Date.now();
    const minted = requestIdTime(newRequestId()) ?? Number.NaN;
    assert.ok(minted >= before && minted <= Date.now(), `${minted}`);
  });

  it('reads the same for an id known to be minted here, without checking its shape', () => {
    for (const id of [idAt(AT), idAt(0), idAt(2 ** 48 - 1), newRequestId()])
      assert.equal(mintedRequestIdTime(id), requestIdTime(id), id);
  });

  it('is none for an id of another shape', () => {
    for (const id of [
      'req_0b6d4b8e-1c6f-4c0e-9a3e-6a1f2f6d8e11', // a v4 UUID (API Gateway's, prefixed)
      '0b6d4b8e-1c6f-7c0e-9a3e-6a1f2f6d8e11', // no prefix
      `req_${builtUuidV7(AT).toUpperCase()}`,
      `run_${builtUuidV7(AT)}`,
      `req_${builtUuidV7(AT)}x`,
      'req_unknown',
    ]) {
      assert.equal(requestIdTime(id), undefined, id);
      assert.equal(traceIdOfRequestId(id), undefined, id);
    }
  });

  it('names a W3C trace id: the UUID’s 32 hex digits', () => {
    for (const id of [newRequestId(), `req_${builtUuidV7(AT)}`]) {
      const traceId = traceIdOfRequestId(id) ?? '';
      assert.match(traceId, /^[0-9a-f]{32}$/, id);
      assert.notEqual(traceId, '0'.repeat(32));
      assert.equal(traceId, id.slice(4).replaceAll('-', ''));
    }
  });
});

describe("a call's time", () => {
  it("is its request id's when the id was minted up to a minute before the clock's now", () => {
    for (const ms of [0, 1, 60_000]) {
      const at = callTime(depsAt(AT + ms), idAt(AT));
      assert.equal(at, new Date(AT).toISOString(), `${ms} ms after`);
      assert.ok(timedByRequestId(at, idAt(AT)));
    }
  });

  it("is the clock's for an id minted longer before, after the clock's now, or of another shape", () => {
    for (const [now, id] of [
      [AT + 60_001, idAt(AT)],
      [AT - 1, idAt(AT)],
      [AT, 'run_1234'],
      [AT, 'req_0b6d4b8e-1c6f-4c0e-9a3e-6a1f2f6d8e11'],
    ] as const) {
      const at = callTime(depsAt(now), id);
      assert.equal(at, new Date(now).toISOString(), `${id} at ${now}`);
      assert.equal(timedByRequestId(at, id), false);
    }
  });
});
