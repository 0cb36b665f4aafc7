import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { TIERS, type Tier } from '../../ports/config.ts';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond, TransactionCanceledError, type TransactOp } from '../../ports/store.ts';
import { invalidInput, PlatformError } from '../../shared/errors.ts';
import { apiKeyItems } from '../api-keys/api-key-items.ts';
import { generateApiKey } from '../api-keys/api-key-secret.ts';
import { defineEntity } from '../entity.ts';
import { memberEntity } from '../workspaces/member-record.ts';
import { OWNED_WORKSPACES_ATTR } from '../workspaces/owned-workspaces.ts';
import { workspaceEntity, workspaceKeys } from '../workspaces/workspace-record.ts';
import { accountKeys } from './account-keys.ts';
import { slugSchema } from './slug.ts';

/**
 * The account record (docs/data-model.md). Its item also holds `key_count` and `owned_workspaces`,
 * which only the API-key and membership transactions touch (by update), so the schema leaves them
 * out and reads strip them.
 */
export const accountEntity = defineEntity({
  name: 'account',
  keys: accountKeys,
  schema: z.object({
    id: z.string(),
    org: z.string(),
    tier: z.enum(TIERS),
    email: z.string().nullable().default(null),
    personal_workspace_id: z.string(),
    created_at: z.string(),
  }),
  locate: (account) => accountKeys.account(account.id),
});

export type Account = z.output<typeof accountEntity.schema>;

export interface CreatedAccount {
  account: Account;
  workspace_id: string;
  api_key: string;
  api_key_id: string;
}

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Creates an account, its personal workspace (slug = org slug, the account as owner) and its
 * first API key in one transaction: either all exist afterwards or none does.
 */
export async function createAccount(
  deps: CoreDeps,
  input: { org: string; tier: Tier; email?: string; apiKey?: string },
): Promise<CreatedAccount> {
  const slug = slugSchema.safeParse(input.org);
  if (!slug.success)
    throw invalidInput([{ field: 'org', message: slug.error.issues[0]?.message ?? 'invalid' }]);
  const email = input.email?.trim().toLowerCase();
  if (email !== undefined && (!emailPattern.test(email) || email.length > 254)) {
    throw invalidInput([{ field: 'email', message: 'must be an email address' }]);
  }
  const now = deps.clock.now().toISOString();
  const accountId = randomUUID();
  const workspaceId = randomUUID();
  const apiKey = input.apiKey ?? generateApiKey();
  const account: Account = {
    id: accountId,
    org: input.org,
    tier: input.tier,
    email: email ?? null,
    personal_workspace_id: workspaceId,
    created_at: now,
  };
  const key = apiKeyItems({ accountId, secret: apiKey, name: 'default', agent: null, createdAt: now });
  const ops: TransactOp[] = [
    {
      name: 'org',
      put: { ...accountKeys.org(input.org), account_id: accountId },
      condition: cond.notExists(),
    },
    {
      name: 'slug',
      put: { ...workspaceKeys.slug(input.org), workspace_id: workspaceId },
      condition: cond.notExists(),
    },
    { name: 'key', put: key.byHash, condition: cond.notExists() },
    {
      name: 'account',
      put: { ...accountEntity.toItem(account), key_count: 1, [OWNED_WORKSPACES_ATTR]: 1 },
      condition: cond.notExists(),
    },
    {
      name: 'workspace',
      put: workspaceEntity.toItem({
        id: workspaceId,
        name: input.org,
        slug: input.org,
        personal: true,
        owner_count: 1,
        owner_account_id: accountId,
        created_at: now,
      }),
    },
    {
      name: 'member',
      put: memberEntity.toItem({
        workspace_id: workspaceId,
        account_id: accountId,
        role: 'owner',
        joined_at: now,
      }),
    },
    { name: 'key of account', put: key.ofAccount },
  ];
  if (email) {
    ops.push({
      name: 'email',
      put: { ...accountKeys.email(email), account_id: accountId },
      condition: cond.notExists(),
    });
  }
  try {
    await deps.store.transactWrite(ops);
  } catch (err) {
    if (!(err instanceof TransactionCanceledError)) throw err;
    const failed = ops.find((op) => op.name !== undefined && err.cancelledBy(op.name))?.name;
    const messages: Record<string, string> = {
      org: `The org slug "${input.org}" is taken`,
      slug: `A workspace with the slug "${input.org}" exists`,
      key: 'That API key is already in use',
      email: `An account with the email ${email} exists`,
    };
    throw new PlatformError(
      'CONFLICT',
      (failed && messages[failed]) ?? 'The account conflicts with an existing one',
    );
  }
  return { account, workspace_id: workspaceId, api_key: apiKey, api_key_id: key.id };
}

export async function getAccount(deps: CoreDeps, accountId: string): Promise<Account | undefined> {
  const item = await deps.store.get(accountKeys.account(accountId));
  return item ? accountEntity.fromItem(item) : undefined;
}

export async function findAccountByOrg(deps: CoreDeps, org: string): Promise<Account | undefined> {
  const guard = await deps.store.get(accountKeys.org(org));
  return guard ? getAccount(deps, String(guard.account_id)) : undefined;
}
