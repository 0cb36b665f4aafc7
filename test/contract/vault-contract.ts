/**
 * The SecretVault contract suite, run against every adapter (test/contract/vault-contract.test.ts: the local
 * vault and the Secrets Manager vault on a mocked client; test/emulator/secrets-manager-emulator.test.ts: the
 * Secrets Manager vault on the Secrets Manager emulator).
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { SecretVault } from '../../functions/ports/secret-vault.ts';

export interface VaultFixture {
  vault: SecretVault;
  close(): Promise<void>;
}

/** Names the contract uses: environment-variable names, as the API allows. */
export const names = (n: number) =>
  Array.from({ length: n }, (_, i) => `SECRET_${String(i).padStart(2, '0')}`);

export function vaultContract(label: string, open: () => Promise<VaultFixture>): void {
  describe(`SecretVault contract: ${label}`, () => {
    let fx: VaultFixture;
    beforeEach(async () => {
      fx = await open();
    });
    afterEach(async () => {
      await fx.close();
    });

    it('put then resolve returns the value', async () => {
      await fx.vault.putValue({ workspaceId: 'ws-1', name: 'API_KEY' }, 's3cret-value');
      assert.deepEqual(await fx.vault.resolve('ws-1', ['API_KEY']), { API_KEY: 's3cret-value' });
    });

    it('replace then resolve returns the new value', async () => {
      const ref = { workspaceId: 'ws-1', name: 'API_KEY' };
      await fx.vault.putValue(ref, 'first');
      await fx.vault.putValue(ref, 'second');
      assert.deepEqual(await fx.vault.resolve('ws-1', ['API_KEY']), { API_KEY: 'second' });
    });

    it('resolve omits names without values', async () => {
      await fx.vault.putValue({ workspaceId: 'ws-1', name: 'PRESENT' }, 'here');
      assert.deepEqual(await fx.vault.resolve('ws-1', ['MISSING', 'PRESENT', 'ALSO_MISSING']), {
        PRESENT: 'here',
      });
      assert.deepEqual(await fx.vault.resolve('ws-1', ['MISSING']), {});
      assert.deepEqual(await fx.vault.resolve('ws-empty', ['PRESENT']), {});
      assert.deepEqual(await fx.vault.resolve('ws-1', []), {});
    });

    it('resolve with duplicate names returns each once', async () => {
      await fx.vault.putValue({ workspaceId: 'ws-1', name: 'A' }, 'a');
      await fx.vault.putValue({ workspaceId: 'ws-1', name: 'B' }, 'b');
      assert.deepEqual(await fx.vault.resolve('ws-1', ['A', 'B', 'A', 'NOPE', 'NOPE', 'B']), {
        A: 'a',
        B: 'b',
      });
    });

    it('values are isolated per workspace and per name', async () => {
      await fx.vault.putValue({ workspaceId: 'ws-1', name: 'TOKEN' }, 'ws1-token');
      await fx.vault.putValue({ workspaceId: 'ws-1', name: 'OTHER' }, 'ws1-other');
      await fx.vault.putValue({ workspaceId: 'ws-2', name: 'TOKEN' }, 'ws2-token');
      assert.deepEqual(await fx.vault.resolve('ws-1', ['TOKEN', 'OTHER']), {
        TOKEN: 'ws1-token',
        OTHER: 'ws1-other',
      });
      assert.deepEqual(await fx.vault.resolve('ws-2', ['TOKEN', 'OTHER']), { TOKEN: 'ws2-token' });
      await fx.vault.putValue({ workspaceId: 'ws-2', name: 'TOKEN' }, 'ws2-replaced');
      await fx.vault.deleteValue({ workspaceId: 'ws-1', name: 'OTHER' });
      assert.deepEqual(await fx.vault.resolve('ws-1', ['TOKEN', 'OTHER']), { TOKEN: 'ws1-token' });
      assert.deepEqual(await fx.vault.resolve('ws-2', ['TOKEN']), { TOKEN: 'ws2-replaced' });
    });

    it('delete then resolve omits the name, and it can be set again', async () => {
      const ref = { workspaceId: 'ws-1', name: 'GONE' };
      await fx.vault.putValue(ref, 'soon gone');
      await fx.vault.putValue({ workspaceId: 'ws-1', name: 'KEPT' }, 'kept');
      await fx.vault.deleteValue(ref);
      assert.deepEqual(await fx.vault.resolve('ws-1', ['GONE', 'KEPT']), { KEPT: 'kept' });
      await fx.vault.putValue(ref, 'back again');
      assert.deepEqual(await fx.vault.resolve('ws-1', ['GONE']), { GONE: 'back again' });
    });

    it('delete of a missing value is not an error', async () => {
      await fx.vault.deleteValue({ workspaceId: 'ws-1', name: 'NEVER_SET' });
      const ref = { workspaceId: 'ws-1', name: 'TWICE' };
      await fx.vault.putValue(ref, 'x');
      await fx.vault.deleteValue(ref);
      await fx.vault.deleteValue(ref);
      assert.deepEqual(await fx.vault.resolve('ws-1', ['NEVER_SET', 'TWICE']), {});
    });

    it('unicode and 64 KB values round-trip', async () => {
      const unicode = 'pässwörd 🔑 秘密 — ✓ \u0000 tab\tnewline\n"quote" \\ end';
      const big = 'x'.repeat(64 * 1024);
      // 64 KB of UTF-8 made of multi-byte characters (4 bytes each).
      const bigUnicode = '🔐'.repeat((64 * 1024) / 4);
      assert.equal(Buffer.byteLength(bigUnicode, 'utf8'), 64 * 1024);
      await fx.vault.putValue({ workspaceId: 'ws-1', name: 'UNICODE' }, unicode);
      await fx.vault.putValue({ workspaceId: 'ws-1', name: 'BIG' }, big);
      await fx.vault.putValue({ workspaceId: 'ws-1', name: 'BIG_UNICODE' }, bigUnicode);
      const out = await fx.vault.resolve('ws-1', ['UNICODE', 'BIG', 'BIG_UNICODE']);
      assert.equal(out.UNICODE, unicode);
      assert.equal(out.BIG, big);
      assert.equal(out.BIG_UNICODE, bigUnicode);
    });

    it('resolve of 45 names returns every value that exists', async () => {
      const all = names(45);
      // Every third name has no value, spread across the batches.
      const set = all.filter((_, i) => i % 3 !== 0);
      for (const name of set) await fx.vault.putValue({ workspaceId: 'ws-1', name }, `value of ${name}`);
      const out = await fx.vault.resolve('ws-1', all);
      assert.deepEqual(out, Object.fromEntries(set.map((name) => [name, `value of ${name}`])));
    });
  });
}
