import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createAccount, findAccountByOrg } from '../core/accounts/account.ts';
import { apiKeyKeys } from '../core/api-keys/api-key-items.ts';
import { hashApiKey } from '../core/api-keys/api-key-secret.ts';
import { addApiKey } from '../core/api-keys/api-keys.ts';
import type { Deps } from './deps.ts';

export const OWNER_ORG = 'local';
export const ADMIN_KEY_FILE = 'admin-api-key';

export interface BootstrapResult {
  created: boolean;
  accountId: string;
  /** The new owner key, on first start only (null when it came from PLATFORM_BOOTSTRAP_API_KEY). */
  generatedKey: string | null;
}

/**
 * On first start (no `local` org yet) creates the owner account with its key, writes the key to
 * <data dir>/admin-api-key (0600). PLATFORM_BOOTSTRAP_API_KEY, when set, is the owner's key; set on
 * a later start, it is added to the owner's keys if it is not one yet.
 */
export async function bootstrapOwner(deps: Deps): Promise<BootstrapResult> {
  const { config } = deps;
  const existing = await findAccountByOrg(deps, OWNER_ORG);
  if (existing) {
    if (
      config.bootstrapApiKey &&
      !(await deps.store.get(apiKeyKeys.byHash(hashApiKey(config.bootstrapApiKey))))
    ) {
      await addApiKey(deps, existing.id, { secret: config.bootstrapApiKey, name: 'bootstrap', agent: null });
    }
    return { created: false, accountId: existing.id, generatedKey: null };
  }
  const created = await createAccount(deps, {
    org: OWNER_ORG,
    tier: config.bootstrapTier,
    ...(config.bootstrapApiKey ? { apiKey: config.bootstrapApiKey } : {}),
  });
  if (config.mode === 'local') {
    const file = join(config.dataDir, ADMIN_KEY_FILE);
    await writeFile(file, `${created.api_key}\n`, { mode: 0o600 });
    await chmod(file, 0o600);
  }
  return {
    created: true,
    accountId: created.account.id,
    generatedKey: config.bootstrapApiKey ? null : created.api_key,
  };
}
