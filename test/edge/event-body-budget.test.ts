import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { carriedAsBase64 } from '../../functions/edge/binary-media-types.ts';
import { CarriedBodyMeter, declaredOverEventBudget } from '../../functions/edge/carried-body-meter.ts';
import { eventBodyCarriedBytes } from '../../functions/edge/event-body-budget.ts';
import { EVENT_BODY_BYTES, MAX_BINARY_BODY_BYTES } from '../../functions/shared/byte-limits.ts';

/**
 * The local server's count of a body (CarriedBodyMeter, as it reads) and the handler's count of
 * AWS's event (eventBodyCarriedBytes) agree with what the event's JSON takes, which is what Lambda
 * counts.
 */

/** What a text body takes inside the event's JSON. */
const inEvent = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;
const meter = (body: Buffer, base64: boolean, chunk = 4096) => {
  const m = new CarriedBodyMeter(base64, undefined);
  for (let i = 0; i < body.length; i += chunk) m.add(body.subarray(i, i + chunk));
  return m.bytes;
};
const event = (body: string, isBase64Encoded: boolean) => ({ body, isBase64Encoded }) as APIGatewayProxyEvent;

describe('a body counted as the Lambda event carries it', () => {
  it('counts text with its JSON escaping: quotes, backslashes, newlines, other control characters, UTF-8', () => {
    const samples = [
      '{"text":"plain ascii"}',
      '{"q":"\\"\\"\\"","b":"\\\\\\\\"}',
      '{"nl":"a\nb\tc\rd"}\n',
      `{"ctl":"${String.fromCharCode(1, 2, 0x1f)}"}`,
      '{"eu":"€€€ and 𝄞"}',
    ];
    for (const text of samples) assert.equal(meter(Buffer.from(text), false, 3), inEvent(text), text);
    const bulk = `{"t":"${'"\\\n€x'.repeat(300_000)}"}`;
    assert.equal(meter(Buffer.from(bulk), false), inEvent(bulk));
    assert.equal(eventBodyCarriedBytes(event(bulk, false)), inEvent(bulk));
  });

  it('counts a binary body as base64, as API Gateway passes the binary media types', () => {
    const bytes = randomBytes(1_000_001);
    const b64 = bytes.toString('base64');
    assert.equal(meter(bytes, true), b64.length);
    assert.equal(eventBodyCarriedBytes(event(b64, true)), b64.length);
    assert.ok(carriedAsBase64('multipart/form-data; boundary=x'));
    assert.ok(carriedAsBase64('application/gzip'));
    assert.ok(!carriedAsBase64('application/json; charset=utf-8'));
    assert.ok(!carriedAsBase64(undefined));
  });

  it('stops at the budget: the largest binary body fits, a byte more does not', () => {
    const m = new CarriedBodyMeter(true, undefined);
    assert.ok(m.add(Buffer.alloc(MAX_BINARY_BODY_BYTES)));
    assert.ok(!m.add(Buffer.alloc(1)));
    assert.ok(!declaredOverEventBudget(MAX_BINARY_BODY_BYTES, true));
    assert.ok(declaredOverEventBudget(MAX_BINARY_BODY_BYTES + 1, true));
    assert.ok(!declaredOverEventBudget(EVENT_BODY_BYTES, false));
    assert.ok(declaredOverEventBudget(EVENT_BODY_BYTES + 1, false));
    const quotes = new CarriedBodyMeter(false, undefined);
    assert.ok(!quotes.add(Buffer.alloc(EVENT_BODY_BYTES / 2 + 1, 0x22)), 'quotes count twice');
  });
});
