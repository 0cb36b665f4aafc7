import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { redactedEvents } from '../../functions/core/calls/redacted-events.ts';
import { redactSecrets } from '../../functions/shared/redact-secrets.ts';
import { StreamRedactor } from '../../functions/shared/stream-redactor.ts';

// A streamed answer's pieces redacted so that what they add up to is the
// redaction of the whole text, a secret split across two pieces included.

/** The text cut at `cuts` (positions, in any order), pushed piece by piece; what came out, whole. */
function streamed(text: string, cuts: number[], secrets: Record<string, string>): string {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const redactor = new StreamRedactor(secrets);
  let out = '';
  let from = 0;
  for (const to of [...at, text.length]) {
    out += redactor.push(text.slice(from, to));
    from = to;
  }
  return out + redactor.end();
}

/** The encoded forms an attacker would print: base64 (in a blob at any alignment), hex, URL. */
function encodings(secret: string, pre: string, post: string): string[] {
  const blob = Buffer.from(`${pre}${secret}${post}`);
  return [
    secret,
    Buffer.from(secret).toString('hex'),
    Buffer.from(secret).toString('hex').toUpperCase(),
    encodeURIComponent(secret),
    blob.toString('base64'),
    blob.toString('base64url'),
  ];
}

// No brackets in secrets: a value holding part of "[REDACTED]" could match across a replacement,
// which redactSecrets itself does not guard against either.
const secretChar = fc.constantFrom(...'abcXYZ019+/=_-?&%ü€ ');
const secretArb = fc.string({ unit: secretChar, minLength: 4, maxLength: 24 });
const noiseArb = fc.string({ unit: fc.constantFrom(...'abcXYZ019+/= ü[]D'), maxLength: 12 });

describe('StreamRedactor', () => {
  it('the pieces add up to redactSecrets of the whole text, however the text is split', () => {
    fc.assert(
      fc.property(
        fc.array(secretArb, { minLength: 1, maxLength: 2 }),
        fc.array(fc.tuple(noiseArb, fc.nat(5), noiseArb, fc.nat(2), fc.nat(2)), {
          minLength: 1,
          maxLength: 4,
        }),
        noiseArb,
        fc.array(fc.nat(), { maxLength: 12 }),
        (values, parts, tail, cuts) => {
          const secrets = Object.fromEntries(values.map((v, i) => [`S${i}`, v]));
          let text = '';
          for (const [noise, form, pre, secretIndex, padIndex] of parts) {
            const secret = values[secretIndex % values.length] as string;
            const forms = encodings(secret, 'p'.repeat(padIndex), pre.slice(0, 2));
            text += `${noise}${forms[form % forms.length]}`;
          }
          text += tail;
          const whole = redactSecrets(text, secrets);
          assert.equal(streamed(text, cuts, secrets), whole);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('lets no plain, hex or base64 form of a secret through when it is split one character a piece', () => {
    const secret = 'sk_live_Zx9/+q?w&=ü';
    const secrets = { KEY: secret };
    for (let pad = 0; pad < 3; pad++) {
      for (const form of encodings(secret, 'x'.repeat(pad), 'yz')) {
        const text = `the key is ${form} ok`;
        const out = streamed(
          text,
          [...text].map((_, i) => i),
          secrets,
        );
        assert.match(out, /\[REDACTED\]/, form);
        assert.ok(!out.includes(secret), out);
        assert.ok(!out.toLowerCase().includes(Buffer.from(secret).toString('hex')), out);
        assert.equal(out, redactSecrets(text, secrets));
      }
    }
  });

  it('holds back no more than the longest needle less one when nothing matches, and nothing without secrets', () => {
    const secret = 'abcdefgh-secret';
    const redactor = new StreamRedactor({ KEY: secret });
    const longest = Math.max(
      ...encodings(secret, '', '').map((f) => f.length),
      Buffer.from(secret).toString('base64').length,
    );
    let sent = '';
    let written = '';
    for (const piece of [
      'Hello ',
      'there, ',
      'this is a long answer ',
      'with nothing secret in it at all.',
    ]) {
      written += piece;
      sent += redactor.push(piece);
      assert.ok(written.length - sent.length < longest, `${written.length - sent.length} held`);
      assert.equal(written.slice(0, sent.length), sent);
    }
    assert.equal(sent + redactor.end(), written);
    const open = new StreamRedactor({ SHORT: 'abc' });
    assert.equal(open.push('abc and more'), 'abc and more', 'values too short to redact hold nothing back');
    assert.equal(open.end(), '');
  });

  it('never splits a surrogate pair between two pieces', () => {
    const redactor = new StreamRedactor({ KEY: 'abcdefgh' });
    const out: string[] = [];
    for (const piece of ['x', '😀'.repeat(20), 'y']) out.push(redactor.push(piece));
    out.push(redactor.end());
    for (const piece of out) assert.ok(!/[\ud800-\udbff]$/.test(piece), JSON.stringify(piece));
    assert.equal(out.join(''), `x${'😀'.repeat(20)}y`);
  });

  it('redacts a streamed call’s events: its deltas fed one character at a time, and its steps', () => {
    const secret = 'open sesame: 4242/zz+Q?ü';
    const text = `plain ${secret}, base64 ${Buffer.from(`ab${secret}`).toString('base64')}, hex ${Buffer.from(secret).toString('hex')}.`;
    const deltas: string[] = [];
    const steps: unknown[] = [];
    const redacted = redactedEvents(
      {
        delta: async (t) => {
          deltas.push(t);
        },
        step: async (s) => {
          steps.push(s);
        },
      },
      { S: secret },
    );
    for (const c of text) redacted.events.delta(c);
    redacted.events.step({ kind: 'tool', name: `x${secret}`, outcome: 'ok', duration_ms: 1 });
    redacted.end();
    assert.equal(deltas.join(''), redactSecrets(text, { S: secret }));
    assert.equal(deltas.join('').match(/\[REDACTED\]/g)?.length, 3);
    assert.ok(
      deltas.every((d) => d.length > 0),
      'no empty delta goes out',
    );
    assert.deepEqual(steps, [{ kind: 'tool', name: 'x[REDACTED]', outcome: 'ok', duration_ms: 1 }]);
  });
});
