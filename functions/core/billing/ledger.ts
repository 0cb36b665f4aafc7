import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond, type Item, queryAll, TransactionCanceledError } from '../../ports/store.ts';
import { PlatformError } from '../../shared/errors.ts';
import { defineEntity, parseStored } from '../entity.ts';
import { sortSuffix } from '../sort-suffix.ts';
import { type CallRecord, callRecordEntity, writeCallRecord } from '../usage/call-records.ts';

/**
 * The credit ledger (docs/billing.md). An account's balance is one item; every change is an
 * immutable entry (top-up, charge, refund) written in the same transaction as the balance update,
 * with a guard item per reference (payment session, call request id) created under `notExists`,
 * so a retried or duplicated operation is recorded once. The balance never goes below zero (the
 * charge's condition) and always equals the sum of the entries.
 */
const ledgerEntryType = z.enum(['topup', 'charge', 'refund']);
export type LedgerEntryType = z.output<typeof ledgerEntryType>;

const ledgerEntrySchema = z.object({
  entry_id: z.string(),
  type: ledgerEntryType,
  /** Signed: a top-up or refund adds, a charge subtracts. */
  amount: z.number(),
  /** The payment session (top-up) or the call's request id (charge, refund). */
  reference: z.string(),
  /** Charges and refunds: the paid agent, org/name/version. */
  agent: z.string().nullable().default(null),
  created_at: z.string(),
});

export type LedgerEntry = z.output<typeof ledgerEntrySchema>;

/** The error_code of a call record written for a paid call the platform died in the middle of. */
export const INTERRUPTED_CALL = 'INTERRUPTED';

/** A charge waiting to be settled by its call's record, or refunded (reconciliation reads these). */
export const PENDING_CHARGES = 'LEDGER#PENDING';

export const ledgerKeys = {
  balance: (accountId: string) => ({ pk: `ACCOUNT#${accountId}`, sk: 'CREDITS' }),
  entries: (accountId: string) => `ACCOUNT#${accountId}#LEDGER`,
  guard: (type: LedgerEntryType, reference: string) => ({ pk: `LEDGERREF#${type}#${reference}`, sk: 'REF' }),
};

/** One immutable ledger entry, under its account, oldest first. */
const ledgerEntryEntity = defineEntity({
  name: 'ledger entry',
  keys: ledgerKeys,
  schema: ledgerEntrySchema.extend({ account_id: z.string() }),
  locate: (entry) => ({
    pk: ledgerKeys.entries(entry.account_id),
    sk: `ENTRY#${entry.created_at}#${sortSuffix()}#${entry.entry_id}`,
  }),
});

function entryItem(accountId: string, entry: LedgerEntry): Item {
  return ledgerEntryEntity.toItem({ account_id: accountId, ...entry });
}

/** The call fields a pending charge keeps (InterruptedCallFields), checked on read. */
const interruptedCallSchema = callRecordEntity.schema.pick({
  at: true,
  caller_key_id: true,
  tenant: true,
  agent_id: true,
  org: true,
  agent: true,
  version: true,
  workspace_id: true,
  endpoint: true,
});

export async function getBalance(deps: CoreDeps, accountId: string): Promise<number> {
  const item = await deps.store.get(ledgerKeys.balance(accountId));
  return typeof item?.credits === 'number' ? item.credits : 0;
}

/** Lands a top-up once per payment reference. Returns false when it had landed already. */
export async function topUp(
  deps: CoreDeps,
  accountId: string,
  credits: number,
  reference: string,
): Promise<boolean> {
  if (!Number.isInteger(credits) || credits <= 0)
    throw new Error('A top-up is a positive whole number of credits');
  const now = deps.clock.now().toISOString();
  const entry: LedgerEntry = {
    entry_id: randomUUID(),
    type: 'topup',
    amount: credits,
    reference,
    agent: null,
    created_at: now,
  };
  try {
    await deps.store.transactWrite([
      {
        name: 'guard',
        put: {
          ...ledgerKeys.guard('topup', reference),
          account_id: accountId,
          entry_id: entry.entry_id,
          amount: credits,
        },
        condition: cond.notExists(),
      },
      { update: ledgerKeys.balance(accountId), spec: { add: { credits }, set: { updated_at: now } } },
      { put: entryItem(accountId, entry), condition: cond.notExists() },
    ]);
    return true;
  } catch (err) {
    if (err instanceof TransactionCanceledError && err.conditionFailed('guard')) return false;
    throw err;
  }
}

export interface ChargeInput {
  accountId: string;
  amount: number;
  /** The call's request id: one charge per call, however often it is retried. */
  requestId: string;
  agent: string;
  /** The workspace of the paid agent (its author's earnings). */
  authorWorkspaceId: string;
  /** Epoch ms after which an unsettled charge is reconciled (the call's deadline). */
  deadlineMs: number;
  /**
   * What the call's record needs if the call never writes it (the platform died mid-call):
   * reconciliation then records the call as interrupted for the caller to see.
   */
  call?: InterruptedCallFields;
}

/** The fields of a call record that the charge keeps, to record an interrupted call. */
export type InterruptedCallFields = Pick<
  CallRecord,
  'at' | 'caller_key_id' | 'tenant' | 'agent_id' | 'org' | 'agent' | 'version' | 'workspace_id' | 'endpoint'
>;

/**
 * Charges a call before it runs: the balance minus `amount` under `credits >= amount`, the guard,
 * and the entry, in one transaction. A duplicate of the same request id charges nothing more and
 * returns false. Not enough credits: 402 INSUFFICIENT_CREDITS, nothing written.
 */
export async function charge(deps: CoreDeps, input: ChargeInput): Promise<boolean> {
  const now = deps.clock.now().toISOString();
  const entry: LedgerEntry = {
    entry_id: randomUUID(),
    type: 'charge',
    amount: -input.amount,
    reference: input.requestId,
    agent: input.agent,
    created_at: now,
  };
  try {
    await deps.store.transactWrite([
      {
        name: 'balance',
        update: ledgerKeys.balance(input.accountId),
        spec: { add: { credits: -input.amount }, set: { updated_at: now } },
        condition: cond.gte('credits', input.amount),
      },
      {
        name: 'guard',
        put: {
          ...ledgerKeys.guard('charge', input.requestId),
          account_id: input.accountId,
          entry_id: entry.entry_id,
          amount: input.amount,
          agent: input.agent,
          author_workspace_id: input.authorWorkspaceId,
          state: 'pending',
          charged_at: now,
          ...(input.call ? { call: input.call } : {}),
          reconcile_after: input.deadlineMs + deps.config.reconcileGraceMs,
          gsi2pk: PENDING_CHARGES,
          gsi2sk: `${String(input.deadlineMs + deps.config.reconcileGraceMs).padStart(15, '0')}#${input.requestId}`,
        },
        condition: cond.notExists(),
      },
      { put: entryItem(input.accountId, entry), condition: cond.notExists() },
    ]);
    return true;
  } catch (err) {
    if (!(err instanceof TransactionCanceledError)) throw err;
    if (err.conditionFailed('guard')) return false;
    if (err.conditionFailed('balance')) {
      const balance = await getBalance(deps, input.accountId);
      throw new PlatformError(
        'INSUFFICIENT_CREDITS',
        `${input.agent} costs ${input.amount} credits per call; the balance is ${balance}. Top up with POST /billing/checkout`,
        { required: input.amount, balance },
      );
    }
    throw err;
  }
}

/** The settle op: written with the call's record, so a delivered run is always billed. */
export function settleOp(requestId: string) {
  return {
    update: ledgerKeys.guard('charge', requestId),
    spec: { set: { state: 'settled' }, remove: ['gsi2pk', 'gsi2sk'] },
    condition: cond.eq('state', 'pending'),
  };
}

/** Refunds a call's charge once. Returns false when there was none or it was refunded already. */
export async function refund(deps: CoreDeps, requestId: string, reason: string): Promise<boolean> {
  const guard = await deps.store.get(ledgerKeys.guard('charge', requestId));
  if (!guard || guard.state !== 'pending') return false;
  const accountId = String(guard.account_id);
  const amount = Number(guard.amount);
  const now = deps.clock.now().toISOString();
  const entry: LedgerEntry = {
    entry_id: randomUUID(),
    type: 'refund',
    amount,
    reference: requestId,
    agent: (guard.agent as string | null) ?? null,
    created_at: now,
  };
  try {
    await deps.store.transactWrite([
      {
        update: ledgerKeys.guard('charge', requestId),
        spec: { set: { state: 'refunded', refund_reason: reason }, remove: ['gsi2pk', 'gsi2sk'] },
        condition: cond.eq('state', 'pending'),
      },
      {
        put: { ...ledgerKeys.guard('refund', requestId), account_id: accountId, amount },
        condition: cond.notExists(),
      },
      { update: ledgerKeys.balance(accountId), spec: { add: { credits: amount }, set: { updated_at: now } } },
      { put: entryItem(accountId, entry), condition: cond.notExists() },
    ]);
    return true;
  } catch (err) {
    if (err instanceof TransactionCanceledError) return false;
    throw err;
  }
}

/**
 * Reconciliation (docs/billing.md): a charge still pending after its call's deadline plus a grace
 * period belongs to a call whose record was never written (the process died between the charge
 * and the run, or between a failed run and its refund). Its caller got no answer, so it is
 * refunded, once. Settled charges (a record was written with the answer) are never touched.
 * `all`: every pending charge, due or not, for a caller that knows no call is running (the local
 * platform at start, holding its data dir's lock: the calls died with the last one), but those of
 * `carriedOn`, the request ids of the runs it carries on (edge/run-resume.ts), which settle them.
 */
export async function reconcileCharges(
  deps: CoreDeps,
  options: { all?: boolean; carriedOn?: ReadonlySet<string> } = {},
): Promise<{ refunded: number }> {
  const now = deps.clock.now().getTime();
  const due = await queryAll(deps.store, {
    index: 'gsi2',
    pk: PENDING_CHARGES,
    ...(options.all ? {} : { sk: { lt: `${String(now).padStart(15, '0')}#~` } }),
  });
  let refunded = 0;
  for (const item of due) {
    const requestId = String(item.pk).replace(/^LEDGERREF#charge#/, '');
    if (options.carriedOn?.has(requestId)) continue;
    if (!(await refund(deps, requestId, 'reconciled: the call never completed'))) continue;
    refunded++;
    // The call's own record was never written: record it as interrupted, so the caller's usage
    // logs show what happened to it (and that it was not billed).
    const call = parseStored('pending charge', interruptedCallSchema.optional(), item.call, item);
    if (call) {
      await writeCallRecord(deps, {
        ...call,
        request_id: requestId,
        caller_account_id: String(item.account_id),
        status: 'error',
        error_code: INTERRUPTED_CALL,
        http_status: 500,
        duration_ms: 0,
        provider: null,
        model: null,
        input_tokens: 0,
        output_tokens: 0,
        total_tokens: 0,
        credits: 0,
      }).catch((err) =>
        deps.logger.error('interrupted call not recorded', { request_id: requestId, error: String(err) }),
      );
    }
  }
  if (refunded > 0) deps.logger.warn('pending charges refunded by reconciliation', { refunded });
  return { refunded };
}

export async function listEntries(deps: CoreDeps, accountId: string): Promise<LedgerEntry[]> {
  const items = await queryAll(deps.store, { pk: ledgerKeys.entries(accountId), reverse: true });
  return items.map((item) => {
    const { account_id: _account, ...entry } = ledgerEntryEntity.fromItem(item);
    return entry;
  });
}
