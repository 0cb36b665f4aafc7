import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { acceptsMediaType, preferredMediaType } from '../../functions/edge/accept-negotiation.ts';

/** Accept negotiation (RFC 9110 §12.5.1) between the call route's two answers, JSON the default. */

const JSON_TYPE = 'application/json; charset=utf-8';
const SSE = 'text/event-stream; charset=utf-8';
const OFFERS = [JSON_TYPE, SSE] as const;
const chosen = (accept: string | undefined) => preferredMediaType(accept, OFFERS);

describe('Accept negotiation', () => {
  it('answers the default when the header is absent or empty, or allows anything', () => {
    assert.equal(chosen(undefined), JSON_TYPE);
    assert.equal(chosen(''), JSON_TYPE);
    assert.equal(chosen('  '), JSON_TYPE);
    assert.equal(chosen('*/*'), JSON_TYPE);
    assert.equal(chosen('text/*, application/*'), JSON_TYPE);
  });

  it('takes the higher weight, and on a tie the default', () => {
    assert.equal(chosen('text/event-stream'), SSE);
    assert.equal(chosen('application/json, text/event-stream'), JSON_TYPE);
    assert.equal(
      chosen('text/event-stream, application/json'),
      JSON_TYPE,
      'the order of the list is no preference',
    );
    assert.equal(chosen('text/event-stream, application/json;q=0.5'), SSE);
    assert.equal(chosen('application/json;q=0.5, text/event-stream'), SSE);
    assert.equal(chosen('application/json, text/event-stream;q=0.9'), JSON_TYPE);
    assert.equal(chosen('text/event-stream;q=0.001, application/json;q=0'), SSE);
  });

  it('reads q=0 as "not acceptable"', () => {
    assert.equal(chosen('text/event-stream;q=0'), undefined);
    assert.equal(chosen('text/event-stream;q=0, */*'), JSON_TYPE);
    assert.equal(chosen('text/event-stream;q=0.0, application/json;q=0.1'), JSON_TYPE);
    assert.equal(acceptsMediaType('text/event-stream;q=0', SSE), false);
    assert.equal(acceptsMediaType('text/event-stream', SSE), true);
    assert.equal(acceptsMediaType('application/json, text/event-stream', SSE), true);
    assert.equal(acceptsMediaType(undefined, SSE), true);
  });

  it('weighs a type by its most specific matching range, whatever the order', () => {
    assert.equal(chosen('*/*;q=0.1, text/event-stream'), SSE);
    assert.equal(chosen('text/*;q=0.9, */*;q=0.1'), SSE);
    assert.equal(chosen('text/event-stream;q=0.2, text/*;q=1, */*;q=0.5'), JSON_TYPE);
    assert.equal(chosen('*/*;q=0, text/event-stream'), SSE);
    assert.equal(chosen('application/*;q=0, */*'), SSE);
    // A range with parameters is more specific still, and matches only what has them.
    assert.equal(
      chosen('text/event-stream;charset=UTF-8;q=0.8, text/event-stream;q=0, application/json;q=0.5'),
      SSE,
    );
    assert.equal(chosen('text/event-stream;charset=latin1, application/json;q=0.5'), JSON_TYPE);
  });

  it('reads q wherever it stands among the parameters, any case, spaces around', () => {
    assert.equal(chosen('TEXT/Event-Stream ; Q=1 , application/json ; q=0.4'), SSE);
    assert.equal(chosen('text/event-stream;q=0.3;charset=utf-8, application/json;q=0.2'), SSE);
  });

  it('leaves out what is not a media range, keeping the rest', () => {
    assert.equal(chosen('text/event-streams'), undefined);
    assert.equal(chosen('event-stream, text/event-stream'), SSE);
    assert.equal(
      chosen('text/event-stream;q=2, application/json;q=0.5'),
      JSON_TYPE,
      'q above 1 is not a weight',
    );
    assert.equal(chosen('text/event-stream;q=0.5000, application/json;q=0.4'), JSON_TYPE, 'four decimals');
    assert.equal(chosen('text/event-stream;q=abc'), undefined);
    assert.equal(chosen('*/event-stream'), undefined);
    assert.equal(chosen('text/event-stream;charset'), undefined);
    assert.equal(chosen(',,, text/event-stream ,'), SSE);
    assert.equal(chosen('text/html'), undefined);
  });

  it('keeps a quoted parameter whole, commas and escaped quotes in it', () => {
    assert.equal(chosen('text/event-stream;charset="utf-8";q=0.9, application/json;q=0.5'), SSE);
    assert.equal(chosen('text/plain;x="1, text/event-stream, y=2", application/json;q=0.5'), JSON_TYPE);
    assert.equal(chosen('text/plain;x="a\\", text/event-stream, \\"", application/json;q=0.5'), JSON_TYPE);
  });

  it('reads a long header to its last range', () => {
    const accept = `${'text/plain;q=0.1, '.repeat(20_000)}text/event-stream`;
    assert.equal(chosen(accept), SSE);
  });
});
