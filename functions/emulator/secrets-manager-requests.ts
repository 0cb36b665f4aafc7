/**
 * The request side of the Secrets Manager emulator's wire (secrets-manager-emulator.ts): the
 * fields of an awsJson1_1 request body, checked as the service checks them, and its errors.
 */
import type { Tag } from '@aws-sdk/client-secrets-manager';
import { AwsWireError } from './emulator-http.ts';

/** Secrets Manager's quotas: a value of at most 64 KB, names of at most 512 chars. */
const MAX_SECRET_BYTES = 65_536;
const MAX_NAME_LENGTH = 512;
const NAME_PATTERN = /^[A-Za-z0-9/_+=.@-]+$/;

const NOT_FOUND = "Secrets Manager can't find the specified secret.";

export const err = (code: string, message: string) => new AwsWireError(code, 400, message);
export const invalidParameter = (message: string) => err('InvalidParameterException', message);
export const notFound = (message = NOT_FOUND) => err('ResourceNotFoundException', message);

export type Body = Record<string, unknown>;

export function optionalString(body: Body, field: string): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalidParameter(`${field} must be a string.`);
  return v;
}

export function requiredString(body: Body, field: string): string {
  const v = optionalString(body, field);
  if (v === undefined || v === '') throw invalidParameter(`You must provide a value for ${field}.`);
  return v;
}

export function checkName(name: string): void {
  if (name.length > MAX_NAME_LENGTH || !NAME_PATTERN.test(name)) {
    throw invalidParameter(
      'Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: -/_+=.@!',
    );
  }
}

/** The value fields of a request: at most one of SecretString and SecretBinary, within 64 KB. */
export function secretValue(body: Body): { secretString?: string; secretBinary?: string } | undefined {
  const secretString = optionalString(body, 'SecretString');
  const secretBinary = optionalString(body, 'SecretBinary');
  if (secretString !== undefined && secretBinary !== undefined) {
    throw invalidParameter(
      "You can't specify both a binary secret value and a string secret value in the same secret.",
    );
  }
  if (secretString !== undefined) {
    if (Buffer.byteLength(secretString, 'utf8') > MAX_SECRET_BYTES) {
      throw invalidParameter(`SecretString must be at most ${MAX_SECRET_BYTES} bytes.`);
    }
    return { secretString };
  }
  if (secretBinary !== undefined) {
    if (Buffer.from(secretBinary, 'base64').length > MAX_SECRET_BYTES) {
      throw invalidParameter(`SecretBinary must be at most ${MAX_SECRET_BYTES} bytes.`);
    }
    return { secretBinary };
  }
  return undefined;
}

export function tagsOf(body: Body): Tag[] {
  const tags = body.Tags;
  if (tags === undefined || tags === null) return [];
  if (
    !Array.isArray(tags) ||
    !tags.every((t) => t && typeof t === 'object' && typeof t.Key === 'string' && typeof t.Value === 'string')
  ) {
    throw invalidParameter('Tags must be a list of {Key, Value} strings.');
  }
  return tags.map((t) => ({ Key: t.Key, Value: t.Value }));
}
