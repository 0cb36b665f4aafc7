import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import type { Tier } from '../../ports/config.ts';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond, type Item, queryAll, SHARED, TransactionCanceledError } from '../../ports/store.ts';
import { notFound, PlatformError } from '../../shared/errors.ts';
import { accountEntity } from '../accounts/account.ts';
import { accountKeys } from '../accounts/account-keys.ts';
import type { ServiceContext } from '../calls/service-keys.ts';
import { parseStored } from '../entity.ts';
import { apiKeyEntity, apiKeyItems, apiKeyKeys, apiKeyLookupEntity } from './api-key-items.ts';
import { generateApiKey, hashApiKey, hashesEqual, RUN_KEY_PREFIX } from './api-key-secret.ts';

export interface ApiKeyRecord {
  id: string;
  name: string;
  prefix: string;
  /** Set on keys an agent uses: tasks it creates record it as created_by. */
  agent: string | null;
  created_at: string;
}

/** The run a run credential's item describes (written by calls/service-keys.ts), checked on read. */
const serviceContextSchema: z.ZodType<ServiceContext> = z.object({
  run_id: z.string(),
  orchestrator: z.string(),
  dependencies: z.array(z.string()),
  hops_remaining: z.number(),
  deadline_ms: z.number(),
  budget: z.number(),
  strict: z.boolean(),
  trace_id: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .optional(),
  span_id: z
    .string()
    .regex(/^[0-9a-f]{16}$/)
    .optional(),
});

/** Who is calling: resolved from the bearer key on every request (no cache, so a deleted key fails at once). */
export interface AuthContext {
  accountId: string;
  org: string;
  tier: Tier;
  personalWorkspaceId: string;
  keyId: string;
  agent: string | null;
  /** Set when the credential is an orchestrator run's PLATFORM_SERVICE_KEY (a run credential, not an API key). */
  service?: ServiceContext;
  serviceKeyHash?: string;
  /**
   * Set for a schedule's run: the schedule's workspace, whose vault supplies the run's declared
   * secrets (a scheduled run of another workspace's public agent uses this workspace's keys).
   */
  runWorkspaceId?: string;
}

export async function createApiKey(
  deps: CoreDeps,
  auth: AuthContext,
  input: { name?: string | undefined; agent?: string | undefined },
): Promise<ApiKeyRecord & { api_key: string }> {
  const secret = generateApiKey();
  const record = await addApiKey(deps, auth.accountId, {
    secret,
    name: input.name ?? 'unnamed',
    agent: input.agent ?? null,
  });
  return { ...record, api_key: secret };
}

/** Stores a key (given or generated) for an existing account, counting it on the account item. */
export async function addApiKey(
  deps: CoreDeps,
  accountId: string,
  input: { secret: string; name: string; agent: string | null },
): Promise<ApiKeyRecord> {
  const created = apiKeyItems({ accountId, ...input, createdAt: deps.clock.now().toISOString() });
  await deps.store.transactWrite([
    { put: created.byHash, condition: cond.notExists() },
    { put: created.ofAccount },
    { update: accountKeys.account(accountId), spec: { add: { key_count: 1 } }, condition: cond.exists() },
  ]);
  return toRecord(created.ofAccount);
}

export async function listApiKeys(deps: CoreDeps, accountId: string): Promise<ApiKeyRecord[]> {
  const items = await queryAll(deps.store, {
    pk: accountKeys.account(accountId).pk,
    sk: { beginsWith: apiKeyKeys.ofAccountPrefix },
  });
  return items.map(toRecord).sort((a, b) => a.created_at.localeCompare(b.created_at));
}

/**
 * Deletes a key. The last key of an account cannot be deleted (the account would be locked
 * out); the key count on the account item is decremented under a condition, so two parallel
 * deletes of an account's last two keys cannot both succeed.
 */
export async function deleteApiKey(deps: CoreDeps, accountId: string, keyId: string): Promise<void> {
  const item = await deps.store.get(apiKeyKeys.ofAccount(accountId, keyId));
  if (!item) throw notFound('API key');
  const entry = apiKeyEntity.fromItem(item);
  try {
    await deps.store.transactWrite([
      { name: 'key', delete: apiKeyKeys.ofAccount(accountId, keyId), condition: cond.exists() },
      { delete: apiKeyKeys.byHash(entry.hash) },
      {
        update: accountKeys.account(accountId),
        spec: { add: { key_count: -1 } },
        condition: cond.gt('key_count', 1),
      },
    ]);
  } catch (err) {
    if (!(err instanceof TransactionCanceledError)) throw err;
    if (err.cancelledBy('key')) throw notFound('API key');
    throw new PlatformError(
      'CONFLICT',
      'This is the account’s last API key; create another before deleting it',
    );
  }
}

/**
 * Resolves the bearer credential of a request. An API key (`ahk_`) is looked up under
 * apiKeyKeys.byHash. A run credential (`ahr_`, an orchestrator run's PLATFORM_SERVICE_KEY) is a
 * different kind of credential under its own store key: it is read only when the route accepts
 * it (`acceptRunCredential`, from the route table's `acceptsRunCredential`, today only the agent
 * call route); on every other route it is 401, like any key that is not an account's.
 */
export async function authenticate(
  deps: CoreDeps,
  authorization: string | undefined,
  options: { acceptRunCredential?: boolean } = {},
): Promise<AuthContext> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match?.[1]) {
    throw new PlatformError('UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <API_KEY>');
  }
  const token = match[1];
  const hash = hashApiKey(token);
  if (token.startsWith(RUN_KEY_PREFIX)) {
    if (!options.acceptRunCredential) {
      throw new PlatformError(
        'UNAUTHORIZED',
        'A run credential (PLATFORM_SERVICE_KEY) authenticates only calls to its run’s declared dependencies',
      );
    }
    const credential = await deps.store.get(apiKeyKeys.runCredential(hash));
    if (!credential || !hashesEqual(String(credential.hash), hash))
      throw new PlatformError('UNAUTHORIZED', 'Invalid or expired run credential');
    const accountItem = await deps.store.get(accountKeys.account(String(credential.account_id)));
    if (!accountItem) throw new PlatformError('UNAUTHORIZED', 'Invalid or expired run credential');
    return {
      ...authContextOf(accountItem, String(credential.id), (credential.agent as string | null) ?? null),
      service: parseStored('run credential', serviceContextSchema, credential.service, credential),
      serviceKeyHash: hash,
    };
  }
  // Read shared (never changed here: parsed into a record of its own): every request reads these.
  const keyItem = await deps.store.get(apiKeyKeys.byHash(hash), SHARED);
  const key = keyItem && apiKeyLookupEntity.fromItem(keyItem);
  if (!key || !hashesEqual(key.hash, hash)) throw new PlatformError('UNAUTHORIZED', 'Invalid API key');
  const accountItem = await deps.store.get(accountKeys.account(key.account_id), SHARED);
  if (!accountItem) throw new PlatformError('UNAUTHORIZED', 'Invalid API key');
  return authContextOf(accountItem, key.id, key.agent);
}

/** The context a request (or a scheduled run) acts in, from the account's stored item. */
export function authContextOf(accountItem: Item, keyId: string, agent: string | null = null): AuthContext {
  const account = accountEntity.fromItem(accountItem);
  return {
    accountId: account.id,
    org: account.org,
    tier: account.tier,
    personalWorkspaceId: account.personal_workspace_id,
    keyId,
    agent,
  };
}

function toRecord(item: Item): ApiKeyRecord {
  const { hash: _hash, ...record } = apiKeyEntity.fromItem(item);
  return record;
}
