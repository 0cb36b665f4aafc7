import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API keys: `ahk_` followed by 43 base64url characters (256 random bits). The fixed prefix lets
 * secret scanners recognise a leaked key. Only the SHA-256 is stored.
 */
export const API_KEY_PREFIX = 'ahk_';

export function generateApiKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/**
 * Run credentials (an orchestrator run's PLATFORM_SERVICE_KEY): `ahr_` and 43 base64url
 * characters. A prefix of their own tells them apart before any lookup (they authenticate only the
 * agent call route) and lets secret scanners and the log redaction recognise them too.
 */
export const RUN_KEY_PREFIX = 'ahr_';

export function generateRunKey(): string {
  return `${RUN_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export function hashApiKey(key: string): string {
  // The one-shot hash: every request hashes its key, and a Hash object costs more than the digest.
  return hash('sha256', key, 'hex');
}

/** Constant-time comparison of two hex digests. */
export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** What listings show of a key: enough to recognise it, too little to use it. */
export function displayPrefix(key: string): string {
  return `${key.slice(0, API_KEY_PREFIX.length + 6)}…`;
}
