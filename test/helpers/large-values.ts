/**
 * Large values compared and measured as the large-values tests need: by digest and
 * length, so a failure does not print megabytes, and by the bytes Lambda counts.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';

/** A large string as its length and SHA-256. */
export const digest = (text: string | undefined) =>
  text === undefined ? 'undefined' : `${text.length}:${createHash('sha256').update(text).digest('hex')}`;

/** Asserts two large strings are equal, comparing (and printing) their digests only. */
export const sameText = (actual: string | undefined, expected: string, message?: string) =>
  assert.equal(digest(actual), digest(expected), message);

/** What Lambda counts for an answer's JSON: the body escaped once more as a string. */
export const lambdaBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(JSON.stringify(value))) - 2;
