import { MAX_SERVICE_SETTINGS_BYTES, SERVICE_SECRET_BYTES, utf8Bytes } from '../../shared/byte-limits.ts';
import type { FieldIssue } from '../../shared/errors.ts';

/** Names that must be secrets, not plain variables (spec "Service", environment rules). */
export const SENSITIVE_NAME = /secret|token|password|passwd|api_?key|credential|private_?key/i;

/** Variables the platform sets itself; a deploy may not set them. */
export const RESERVED_ENV = ['PORT', 'PLATFORM_HTTP_PORT', 'PLATFORM_SERVICE_ID', 'PLATFORM_AGENT'];

/** Checks plain environment variables: names, and the sensitive-name rule. */
export function checkEnv(env: Record<string, string>, field: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const name of Object.keys(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name)) {
      issues.push({ field: `${field}.${name}`, message: 'must be a variable name: letters, digits and _' });
    } else if (SENSITIVE_NAME.test(name)) {
      issues.push({
        field: `${field}.${name}`,
        message:
          'looks sensitive (secret, token, password, api_key, credential or private_key): store it in the workspace vault and list it under secrets',
      });
    } else if (RESERVED_ENV.includes(name) || name.startsWith('AGENTHOST_')) {
      issues.push({ field: `${field}.${name}`, message: 'is set by the platform' });
    }
  }
  return issues;
}

/**
 * The env and the secrets of a service together within what ECS's task definition carries
 * (MAX_SERVICE_SETTINGS_BYTES), the same on both deployments, checked before any record: 400 on
 * `field` (the one the request changed) naming the limit.
 */
export function checkSettingsSize(
  env: Record<string, string>,
  secrets: string[],
  field: string,
): FieldIssue[] {
  const envBytes = Object.entries(env).reduce((n, [k, v]) => n + utf8Bytes(k) + utf8Bytes(v), 0);
  const size = envBytes + secrets.length * SERVICE_SECRET_BYTES;
  if (size <= MAX_SERVICE_SETTINGS_BYTES) return [];
  return [
    {
      field,
      message: `env and secrets together must be at most ${MAX_SERVICE_SETTINGS_BYTES} bytes (each variable's name and value, and ${SERVICE_SECRET_BYTES} bytes for each of the ${secrets.length} secrets); they are ${size}`,
    },
  ];
}

/** The secret names a service gets: the agent's required_secrets merged with the extra ones. */
export function mergeSecretNames(required: string[], extra: string[]): string[] {
  return [...new Set([...required, ...extra])].sort();
}
