import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signatureHeader } from '../../functions/core/runs/webhook-signature.ts';
import { verifyWebhook } from '../../sdk/src/webhooks.ts';

/**
 * The SDK's verifyWebhook against the platform's own signer (functions/core/runs/webhook-signature.ts):
 * what the platform signs verifies, and nothing else does (docs/runs.md, "Told when it ends").
 */

const secret = 'whsec_test-secret-0123456789';
const body = JSON.stringify({ run_id: 'r1', status: 'succeeded', text: 'né ✓' });
const t = 1_781_524_800;
const now = t * 1000;

describe('verifyWebhook', () => {
  it('accepts what the platform signs, as text or bytes, within the tolerance either way', async () => {
    const header = signatureHeader(secret, t, body);
    assert.equal(await verifyWebhook(secret, header, body, 300, now), true);
    assert.equal(await verifyWebhook(secret, header, new TextEncoder().encode(body), 300, now), true);
    assert.equal(await verifyWebhook(secret, header, body, 300, now + 299_000), true);
    assert.equal(await verifyWebhook(secret, header, body, 300, now - 299_000), true);
  });

  it('refuses another secret, another body, another time, an old signature and a malformed header', async () => {
    const header = signatureHeader(secret, t, body);
    assert.equal(await verifyWebhook(`${secret}!`, header, body, 300, now), false);
    assert.equal(await verifyWebhook(secret, header, body.replace('r1', 'r2'), 300, now), false);
    assert.equal(await verifyWebhook(secret, header.replace(`t=${t}`, `t=${t + 1}`), body, 300, now), false);
    assert.equal(await verifyWebhook(secret, header, body, 300, now + 301_000), false);
    for (const bad of [undefined, null, '', 't=1', header.split(',')[1], 'garbage', `t=${t},v1=zz`])
      assert.equal(await verifyWebhook(secret, bad, body, 300, now), false, String(bad));
  });

  it('accepts the header when any of its v1 signatures matches, and skips schemes it does not know', async () => {
    const good = signatureHeader(secret, t, body).split(',')[1];
    const other = signatureHeader('whsec_other', t, body).split(',')[1];
    assert.equal(await verifyWebhook(secret, `t=${t},v0=abc,${other},${good}`, body, 300, now), true);
    assert.equal(await verifyWebhook(secret, `t=${t},${other}`, body, 300, now), false);
  });
});
