import { randomUUID } from 'node:crypto';
import type { CoreDeps } from '../../ports/core-deps.ts';
import type { RunSteps } from '../../ports/run-steps.ts';
import { ConditionFailedError, cond } from '../../ports/store.ts';
import { PlatformError } from '../../shared/errors.ts';
import { apiKeyKeys } from '../api-keys/api-key-items.ts';
import { generateRunKey, hashApiKey } from '../api-keys/api-key-secret.ts';

/**
 * What a run's PLATFORM_SERVICE_KEY (a run credential, `ahr_…`) carries. The values live in the
 * credential's record on the platform side (only the key's hash is stored), so user code holding
 * the key cannot raise them. A run credential is not an API key: it lives under its own store key
 * (apiKeyKeys.runCredential), which the API-key lookup never reads, and it authenticates only the agent
 * call route (the route table's `acceptsRunCredential`), there only for `dependencies`.
 */
export interface ServiceContext {
  /** The run the key belongs to (its request id). */
  run_id: string;
  /** org/name/version of the orchestrator that holds the key. */
  orchestrator: string;
  /** The only agents calls made with this key may reach: org/name/version, as the manifest pins them. */
  dependencies: string[];
  /** How many more hops calls made with this key may go (each sub-call uses one). */
  hops_remaining: number;
  /** Epoch ms (platform clock): the orchestrator's deadline; sub-calls must finish before it. */
  deadline_ms: number;
  /** Credits passed to each dependency call (per_call_downstream_cap), for the billing work. */
  budget: number;
  /** A strict parent forces strict mode on everything downstream. */
  strict: boolean;
  /**
   * The run's trace and its call's root span: a sub-call made with the key joins that trace, under
   * that span unless its traceparent names a span of the same trace (docs/traces.md).
   */
  trace_id?: string | undefined;
  span_id?: string | undefined;
}

/**
 * Issues the credential of one orchestrator run: a record bound to the calling account, carrying
 * the service context, expiring by the store's TTL with the run's deadline (plus a minute) as a
 * backstop, and deleted when the run ends (revoke).
 */
export async function issueServiceKey(
  deps: CoreDeps,
  accountId: string,
  context: ServiceContext,
  /** What the run's calls have used of it so far: a run carried on keeps its previous credential's. */
  used: { sub_calls?: number; credits_spent?: number } = {},
): Promise<IssuedServiceKey> {
  const key = generateRunKey();
  const hash = hashApiKey(key);
  const itemKey = apiKeyKeys.runCredential(hash);
  await deps.store.put({
    ...itemKey,
    id: randomUUID(),
    hash,
    account_id: accountId,
    agent: context.orchestrator.split('/')[1] ?? null,
    created_at: deps.clock.now().toISOString(),
    service: { ...context },
    ...used,
    ttl: Math.ceil(context.deadline_ms / 1000) + 60,
  });
  return {
    key,
    hash,
    subCalls: async () => Number((await deps.store.get(itemKey))?.sub_calls ?? 0),
    revoke: async () => void (await deps.store.delete(itemKey)),
  };
}

export interface IssuedServiceKey {
  key: string;
  /** Its SHA-256: all that is kept of it. */
  hash: string;
  subCalls: () => Promise<number>;
  revoke: () => Promise<void>;
}

/**
 * The credential of a run's orchestration as its step `credential` (ports/run-steps.ts): the key
 * itself is never recorded, only its hash. A replay issues a new key that carries what the previous
 * one had used (its sub-calls, its downstream budget spent) and revokes that one: a run carried on
 * cannot spend its budget twice, and a key its first process handed out reaches nothing any more.
 */
export async function recordedServiceKey(
  deps: CoreDeps,
  steps: RunSteps,
  accountId: string,
  context: ServiceContext,
): Promise<IssuedServiceKey> {
  // The first process's key, then each key a replay issued after it (`credential-1`, …): the last
  // one recorded holds what the run has used so far, however many times it was carried on.
  let previous: string | undefined;
  for (let n = 0; ; n++) {
    let issued: IssuedServiceKey | undefined;
    // `varies`: each replay asks for one more of them than the one before.
    const recorded = await steps.step(
      n === 0 ? 'credential' : `credential-${n}`,
      async () => {
        issued = previous
          ? await carriedServiceKey(deps, accountId, context, previous)
          : await issueServiceKey(deps, accountId, context);
        return { hash: issued.hash };
      },
      { varies: true },
    );
    if (issued) return issued;
    previous = recorded.hash;
  }
}

/** A new key carrying what the key `previousHash` used, which is revoked. */
async function carriedServiceKey(
  deps: CoreDeps,
  accountId: string,
  context: ServiceContext,
  previousHash: string,
): Promise<IssuedServiceKey> {
  const previous = apiKeyKeys.runCredential(previousHash);
  const item = await deps.store.get(previous);
  const carried = await issueServiceKey(deps, accountId, context, {
    sub_calls: Number(item?.sub_calls ?? 0),
    credits_spent: Number(item?.credits_spent ?? 0),
  });
  await deps.store.delete(previous);
  return carried;
}

/**
 * The one rule of what a run credential may call: exactly the org/name/version its orchestrator's
 * manifest declares. Anything else is 401, as for every other route: the credential does not
 * authenticate it (and says nothing about whether the target exists).
 */
export function requireDeclaredDependency(
  service: ServiceContext,
  target: { org: string; agent: string; version: string },
): void {
  const ref = `${target.org}/${target.agent}/${target.version}`;
  if (!service.dependencies.includes(ref)) {
    throw new PlatformError(
      'UNAUTHORIZED',
      `This run credential authenticates only calls to the dependencies ${service.orchestrator} declares`,
    );
  }
}

/** Counts one sub-call made with a service key (strict mode requires at least one). */
export async function countSubCall(deps: CoreDeps, keyHash: string): Promise<void> {
  await deps.store.update(
    apiKeyKeys.runCredential(keyHash),
    { add: { sub_calls: 1 } },
    { condition: cond.exists() },
  );
}

/**
 * Spends `credits` of an orchestration's per_call_downstream_cap (the service key's budget) for a
 * paid sub-call, under a condition so that racing sub-calls cannot pass the cap together.
 */
export async function spendDownstreamBudget(
  deps: CoreDeps,
  keyHash: string,
  credits: number,
  budget: number,
): Promise<void> {
  if (credits > budget) {
    throw new PlatformError(
      'INSUFFICIENT_CREDITS',
      `This call costs ${credits} credits, more than the orchestration's per_call_downstream_cap of ${budget}`,
      { required: credits, cap: budget },
    );
  }
  try {
    await deps.store.update(
      apiKeyKeys.runCredential(keyHash),
      { add: { credits_spent: credits } },
      {
        condition: cond.and(
          cond.exists(),
          cond.or(cond.attrNotExists('credits_spent'), cond.lte('credits_spent', budget - credits)),
        ),
      },
    );
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    throw new PlatformError(
      'INSUFFICIENT_CREDITS',
      `The orchestration's per_call_downstream_cap of ${budget} credits would be exceeded by this ${credits}-credit call`,
      { required: credits, cap: budget },
    );
  }
}
