/**
 * Which of the account's keys (GET /api-keys) is the one the CLI runs with. The platform lists a
 * key's display prefix, its first characters followed by "…" (api-key-secret.ts displayPrefix),
 * never the key, so the key is recognised by starting with the prefix's characters.
 */
export function isKeyWithPrefix(apiKey: string | undefined, prefix: string): boolean {
  const start = prefix.replace(/…$/, '');
  return apiKey !== undefined && start.length > 0 && apiKey.startsWith(start);
}
