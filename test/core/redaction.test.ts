import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactSecrets } from '../../functions/shared/redact-secrets.ts';

// User code that prints a secret encoded (base64, base64url, hex, URL
// encoding), alone or inside a longer encoded blob, does not get it past redaction.

const SECRET = 'sk_live_Zx9/+q?w&=ü';
const secrets = { STRIPE_KEY: SECRET };

/** Everything an attacker could decode from the text: each run of each alphabet, decoded. */
function decodings(text: string): string[] {
  const out = [text];
  for (const run of text.match(/[A-Za-z0-9+/=]{4,}/g) ?? [])
    out.push(Buffer.from(run, 'base64').toString('latin1'));
  for (const run of text.match(/[A-Za-z0-9\-_]{4,}/g) ?? [])
    out.push(Buffer.from(run, 'base64url').toString('latin1'));
  for (const run of text.match(/[0-9a-fA-F]{8,}/g) ?? [])
    out.push(Buffer.from(run, 'hex').toString('latin1'));
  try {
    out.push(decodeURIComponent(text));
  } catch {}
  return out;
}

const leaks = (text: string) => {
  const needle = Buffer.from(SECRET, 'utf8').toString('latin1');
  return decodings(text).some((d) => d.includes(needle) || d.includes(SECRET));
};

describe('secret redaction covers encoded forms', () => {
  it('redacts hex, URL-encoded, base64 and base64url forms, alone and inside longer blobs', () => {
    const cases: string[] = [
      SECRET,
      Buffer.from(SECRET).toString('hex'),
      Buffer.from(SECRET).toString('hex').toUpperCase(),
      encodeURIComponent(SECRET),
    ];
    for (let pre = 0; pre < 6; pre++) {
      for (let post = 0; post < 4; post++) {
        const blob = Buffer.from(`${'p'.repeat(pre)}${SECRET}${'s'.repeat(post)}`);
        cases.push(`[${blob.toString('base64')}]`, `[${blob.toString('base64url')}]`);
      }
    }
    for (const printed of cases) {
      assert.ok(leaks(printed), `the probe itself finds the secret in ${printed}`);
      const redacted = redactSecrets(`log: ${printed} end`, secrets);
      assert.ok(!leaks(redacted), `${printed} redacted to ${redacted} still holds the secret`);
      assert.match(redacted, /\[REDACTED\]/);
    }
  });

  it('leaves short values and unrelated text alone', () => {
    assert.equal(redactSecrets('abc 616263 YWJj', { A: 'abc' }), 'abc 616263 YWJj');
    assert.equal(redactSecrets('hello world', secrets), 'hello world');
  });
});
