import { randomBytes } from 'node:crypto';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { type SecretRef, type SecretVault, VaultConfigurationError } from '../../ports/secret-vault.ts';
import { cond, type Item, type Store } from '../../ports/store.ts';
import { type Sealed, seal, unseal } from '../../shared/aes-gcm.ts';

const CANARY_KEY = { pk: 'VAULT#CANARY', sk: 'VAULT' };
const CANARY_TEXT = 'agenthost vault canary';

const valueKey = (ref: SecretRef) => ({ pk: `VAULT#${ref.workspaceId}`, sk: `SECRET#${ref.name}` });

/**
 * The embedded vault: values encrypted with AES-256-GCM under a 256-bit key kept in a file of its
 * own (mode 0600) in the data dir, stored as items of the Store. Each value has a fresh 96-bit IV,
 * and its slot (workspace/name) is the additional authenticated data, so a ciphertext cannot be
 * moved to another secret. A canary item, encrypted at first start, tells a missing or different
 * key file apart from an empty vault at start-up: the platform refuses to start rather than lose
 * or misread secrets.
 */
export class LocalSecretVault implements SecretVault {
  private readonly store: Store;
  private readonly key: Buffer;

  private constructor(store: Store, key: Buffer) {
    this.store = store;
    this.key = key;
  }

  static async open(store: Store, keyFile: string): Promise<LocalSecretVault> {
    const canary = await store.get(CANARY_KEY);
    let key: Buffer;
    const existing = await readKeyFile(keyFile);
    if (existing) {
      key = existing;
    } else {
      if (canary) {
        throw new VaultConfigurationError(
          `The vault key file ${keyFile} is missing, but the store holds secrets encrypted with it. ` +
            'Restore the key file from your backup; agenthost will not create a new key over existing secrets.',
        );
      }
      key = randomBytes(32);
      // 'wx': never overwrite a key file another process created meanwhile.
      await writeFile(keyFile, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' }).catch(
        async (err) => {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
          key = (await readKeyFile(keyFile)) as Buffer;
        },
      );
      await chmod(keyFile, 0o600);
    }
    const vault = new LocalSecretVault(store, key);
    if (canary) {
      try {
        if (vault.decrypt(canary, 'canary') !== CANARY_TEXT) throw new Error('canary mismatch');
      } catch {
        throw new VaultConfigurationError(
          `The vault key file ${keyFile} does not match the key the stored secrets were encrypted with. ` +
            'Restore the right key file; secrets cannot be read with this one.',
        );
      }
    } else {
      await store
        .put({ ...CANARY_KEY, ...vault.encrypt(CANARY_TEXT, 'canary') }, { condition: cond.notExists() })
        .catch(
          () => undefined, // another process wrote it first; verified on its next start
        );
    }
    return vault;
  }

  async putValue(ref: SecretRef, value: string): Promise<void> {
    await this.store.put({ ...valueKey(ref), ...this.encrypt(value, aad(ref)) });
  }

  async deleteValue(ref: SecretRef): Promise<void> {
    await this.store.delete(valueKey(ref));
  }

  async resolve(workspaceId: string, names: string[]): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const name of new Set(names)) {
      const item = await this.store.get(valueKey({ workspaceId, name }));
      if (item) out[name] = this.decrypt(item, aad({ workspaceId, name }));
    }
    return out;
  }

  private encrypt(plaintext: string, associated: string): Sealed {
    return seal(this.key, plaintext, associated);
  }

  private decrypt(item: Item, associated: string): string {
    return unseal(this.key, item, associated);
  }
}

function aad(ref: SecretRef): string {
  return `${ref.workspaceId}/${ref.name}`;
}

async function readKeyFile(path: string): Promise<Buffer | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) {
    throw new VaultConfigurationError(`The vault key file ${path} is not a base64-encoded 256-bit key`);
  }
  const mode = (await stat(path)).mode & 0o777;
  if (mode & 0o077) await chmod(path, 0o600);
  return key;
}
