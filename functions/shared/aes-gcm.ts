import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM as the platform keeps secrets at rest (the local vault, the emulated Secrets
 * Manager): a fresh 96-bit IV each time, and the associated data binding a ciphertext to its
 * place, so it cannot be moved to another. Fields base64, as stored.
 */
export interface Sealed {
  iv: string;
  tag: string;
  ciphertext: string;
}

export function seal(key: Buffer, plaintext: string, associated: string): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(associated, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return {
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    ciphertext: ciphertext.toString('base64'),
  };
}

/** The plaintext; throws when the key, the associated data or the ciphertext is not the sealed one. */
export function unseal(key: Buffer, stored: object, associated: string): string {
  const sealed = stored as Partial<Record<keyof Sealed, unknown>>;
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(String(sealed.iv), 'base64'));
  decipher.setAAD(Buffer.from(associated, 'utf8'));
  decipher.setAuthTag(Buffer.from(String(sealed.tag), 'base64'));
  return Buffer.concat([
    decipher.update(Buffer.from(String(sealed.ciphertext), 'base64')),
    decipher.final(),
  ]).toString('utf8');
}
