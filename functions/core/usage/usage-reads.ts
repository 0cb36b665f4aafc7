// Reading call records for usage reports: the partitions a caller or author sees, range reads with
// filters, and the paged logs with their cursor.

import type { CoreDeps } from '../../ports/core-deps.ts';
import { type IndexName, type Item, queryAll } from '../../ports/store.ts';
import { invalidInput } from '../../shared/errors.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { requireMembership } from '../workspaces/authorize.ts';
import { memberKeys } from '../workspaces/member-record.ts';
import { type CallRecord, callRecordKeys, fromCallRecordItem } from './call-records.ts';
import { compareKeys } from './usage-aggregation.ts';
import { type Range, rangeOut, skBounds } from './usage-range.ts';
import { type CallLogEntry, NONE, type UsageLogs } from './usage-schemas.ts';

export interface Filters {
  agent?: string | undefined;
  tenant?: string | undefined;
  /** The call records' routes only (usage-schemas.ts, recordFilters). */
  status?: 'success' | 'error' | 'timeout' | 'failed' | undefined;
}

/** A partition of call records: the caller's table partition or a workspace's GSI1 partition. */
export interface Partition {
  index?: IndexName;
  pk: string;
}

export function callerPartitions(auth: AuthContext): Partition[] {
  return [{ pk: callRecordKeys.callerPk(auth.accountId) }];
}

export function authorPartitions(workspaceIds: string[]): Partition[] {
  return workspaceIds.map((id) => ({ index: 'gsi1', pk: callRecordKeys.authorPk(id) }));
}

/**
 * The workspaces whose agents' calls an author sees: the one asked for (the caller must own it:
 * not a member is 404, a member who is not an owner 403, as everywhere), or every workspace the
 * caller owns.
 */
export async function ownedWorkspaces(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string | undefined,
): Promise<string[]> {
  if (workspaceId !== undefined) {
    await requireMembership(deps, auth.accountId, workspaceId, 'owner');
    return [workspaceId];
  }
  const memberships = await queryAll(deps.store, {
    index: 'gsi1',
    pk: memberKeys.ofAccount(auth.accountId),
  });
  return memberships.filter((m) => m.role === 'owner').map((m) => String(m.workspace_id));
}

export function matches(record: CallRecord, filters: Filters): boolean {
  if (filters.agent !== undefined && `${record.org}/${record.agent}` !== filters.agent) return false;
  if (filters.tenant !== undefined && (record.tenant ?? NONE) !== filters.tenant) return false;
  if (filters.status === 'failed') return record.status !== 'success';
  if (filters.status !== undefined && record.status !== filters.status) return false;
  return true;
}

export async function readRecords(
  deps: CoreDeps,
  partitions: Partition[],
  range: Range,
  filters: Filters,
): Promise<CallRecord[]> {
  const pages = await Promise.all(
    partitions.map((p) => queryAll(deps.store, { ...p, sk: { between: skBounds(range) } })),
  );
  return pages
    .flat()
    .map(fromCallRecordItem)
    .filter((r) => matches(r, filters));
}

// ---- logs ----

const PAGE_READ = 200;

/**
 * One page of records, newest first, across the partitions. The cursor is the sort key of the
 * last entry returned (sort keys are unique: they end in the request id), so the next page starts
 * strictly below it in every partition: no entry is repeated or skipped, also when calls arrive
 * between pages (newer ones are above the cursor and do not shift the pages).
 */
export async function logs(
  deps: CoreDeps,
  partitions: Partition[],
  range: Range,
  query: Filters & { limit: number; cursor?: string | undefined },
  options: { showKeyIds: boolean },
): Promise<UsageLogs> {
  const [lower, upper] = skBounds(range);
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const top = after !== undefined && after < upper ? after : upper;
  const want = query.limit + 1;
  // A cursor older than the range's start: nothing is left (and DynamoDB refuses an empty BETWEEN).
  if (top < lower) return { ...rangeOut(range), logs: [], next_cursor: null };

  const perPartition = await Promise.all(
    partitions.map(async (p) => {
      const found: Item[] = [];
      let cursor: string | undefined;
      do {
        const page = await deps.store.query({
          ...p,
          sk: { between: [lower, top] },
          reverse: true,
          limit: PAGE_READ,
          cursor,
        });
        for (const item of page.items) {
          if (after !== undefined && sortKeyOf(p, item) >= after) continue;
          if (matches(fromCallRecordItem(item), query)) found.push(item);
        }
        cursor = page.cursor;
      } while (cursor && found.length < want);
      return found.map((item) => ({ sk: sortKeyOf(p, item), item }));
    }),
  );
  const merged = perPartition.flat().sort((a, b) => compareKeys(b.sk, a.sk));
  const page = merged.slice(0, query.limit);
  const last = page.at(-1);
  return {
    ...rangeOut(range),
    logs: page.map(({ item }) => toLogEntry(fromCallRecordItem(item), options.showKeyIds)),
    next_cursor: merged.length > query.limit && last ? encodeCursor(last.sk) : null,
  };
}

/** The record's fields in a fixed order (then any the gateway adds later), without the store's keys. */
const LOG_FIELDS = [
  'request_id',
  'at',
  'caller_account_id',
  'caller_key_id',
  'tenant',
  'agent_id',
  'org',
  'agent',
  'version',
  'workspace_id',
  'endpoint',
  'status',
  'error_code',
  'http_status',
  'duration_ms',
  'provider',
  'model',
  'input_tokens',
  'output_tokens',
  'total_tokens',
] as const;

function toLogEntry(record: CallRecord, showKeyIds: boolean): CallLogEntry {
  const out: Record<string, unknown> = {};
  for (const field of LOG_FIELDS) if (field in record) out[field] = record[field];
  for (const [field, value] of Object.entries(record)) if (!(field in out)) out[field] = value;
  // An author sees who called by account id; key ids are the caller's own business.
  if (!showKeyIds) delete out.caller_key_id;
  return out as CallLogEntry;
}

function sortKeyOf(p: Partition, item: Item): string {
  return String(p.index === 'gsi1' ? item.gsi1sk : item.sk);
}

const SORT_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[\x21-\x7e]{1,200}$/;

function encodeCursor(sk: string): string {
  return Buffer.from(JSON.stringify({ v: 1, sk }), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      v?: unknown;
      sk?: unknown;
    };
    if (parsed.v === 1 && typeof parsed.sk === 'string' && SORT_KEY.test(parsed.sk)) return parsed.sk;
  } catch {
    // falls through to the error below
  }
  throw invalidInput([{ field: 'query.cursor', message: 'is not a next_cursor of a previous page' }]);
}
