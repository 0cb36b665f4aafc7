import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Sealed, seal, unseal } from '../shared/aes-gcm.ts';
import { JsonStateFile } from './json-state-file.ts';

/**
 * An emulator's state kept encrypted at rest, as the local vault keeps secrets (AES-256-GCM under a
 * 256-bit key in a file of its own, mode 0600, beside the state): the Secrets Manager stand-in's
 * values are never on disk in clear, as Secrets Manager keeps them under KMS. A state file written
 * before encryption (plain JSON) is read once and written back encrypted.
 */

interface Envelope extends Sealed {
  v: 1;
}

const isEnvelope = (value: unknown): value is Envelope =>
  typeof value === 'object' && value !== null && (value as { v?: unknown }).v === 1 && 'ciphertext' in value;

export class EncryptedStateFile<T> {
  private readonly file: JsonStateFile<Envelope | T>;
  private readonly keyPath: string;
  private readonly associated: string;
  private key: Buffer | undefined;

  /**
   * `<dir>/<name>.json`, under the key in `<dir>/<name>.key`. `what` names the state in errors and
   * is bound to the ciphertext, so one emulator's file cannot pass for another's.
   */
  constructor(dir: string, name: string, what: string) {
    this.file = new JsonStateFile<Envelope | T>(join(dir, `${name}.json`));
    this.keyPath = join(dir, `${name}.key`);
    this.associated = what;
  }

  load(fallback: T): T {
    const stored = this.file.load(fallback);
    const key = this.readKey();
    if (!isEnvelope(stored)) {
      // Nothing yet, or a plain state from before: encrypted from now on.
      if (stored !== fallback) this.save(stored as T);
      return stored as T;
    }
    if (!key) {
      throw new Error(
        `The key file ${this.keyPath} is missing, but ${this.associated} is stored encrypted with it: restore it, or remove the state to start empty.`,
      );
    }
    try {
      return JSON.parse(unseal(key, stored, this.associated)) as T;
    } catch {
      throw new Error(
        `The key file ${this.keyPath} does not decrypt ${this.associated}: restore the right one.`,
      );
    }
  }

  save(state: T): void {
    this.key ??= this.readKey() ?? this.createKey();
    this.file.save({ v: 1, ...seal(this.key, JSON.stringify(state), this.associated) });
  }

  private readKey(): Buffer | undefined {
    let text: string;
    try {
      text = readFileSync(this.keyPath, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    const key = Buffer.from(text.trim(), 'base64');
    if (key.length !== 32)
      throw new Error(`The key file ${this.keyPath} is not a base64-encoded 256-bit key`);
    chmodSync(this.keyPath, 0o600);
    this.key = key;
    return key;
  }

  private createKey(): Buffer {
    const key = randomBytes(32);
    // 'wx': never overwrite a key another process wrote meanwhile (its state would be lost).
    try {
      writeFileSync(this.keyPath, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      return this.readKey() as Buffer;
    }
    this.key = key;
    return key;
  }
}
