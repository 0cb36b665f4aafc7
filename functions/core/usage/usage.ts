import type { CoreDeps } from '../../ports/core-deps.ts';
import { type IndexName, type Item, queryAll } from '../../ports/store.ts';
import { invalidInput } from '../../shared/errors.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { keys } from '../keys.ts';
import { requireMembership } from '../workspaces/authorize.ts';
import { type CallRecord, callRecordKeys, fromCallRecordItem } from './call-records.ts';
import { rateLimitState, readDailyCalls } from './daily-usage.ts';
import {
  type AuthorUsageBreakdownQuery,
  type AuthorUsageLogsQuery,
  type AuthorUsageQuery,
  type AuthorUsageSummary,
  type AuthorUsageTimeseriesQuery,
  type CallLogEntry,
  DEFAULT_RANGE_DAYS,
  type Granularity,
  type GroupBy,
  MAX_RANGE_DAYS,
  NONE,
  type Quota,
  type UsageBreakdown,
  type UsageBreakdownQuery,
  type UsageCompute,
  type UsageLogs,
  type UsageLogsQuery,
  type UsageQuery,
  type UsageStats,
  type UsageSummary,
  type UsageTenants,
  type UsageTenantsQuery,
  type UsageTimeseries,
  type UsageTimeseriesQuery,
} from './usage-schemas.ts';

/**
 * Usage reports over the call records the gateway writes (call-records.ts). The caller side reads
 * the caller's partition (`ACCOUNT#<id>#CALLS`); the author side reads GSI1 (`WS#<id>#CALLS`) of
 * each workspace the caller owns. Every read is a Query bounded by the range on the sort key
 * (`<ISO time>#<request_id>`), never a Scan; filters and aggregation happen here.
 */

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Sorts after every request id (they are ASCII), so `<to>#\uffff` closes the range inclusively. */
const SK_MAX = '\uffff';

export interface Range {
  from: Date;
  to: Date;
}

interface Filters {
  agent?: string | undefined;
  tenant?: string | undefined;
}

interface RangeQuery {
  from?: string | undefined;
  to?: string | undefined;
}

/** A partition of call records: the caller's table partition or a workspace's GSI1 partition. */
interface Partition {
  index?: IndexName;
  pk: string;
}

// ---- caller side ----

export async function usageSummary(
  deps: CoreDeps,
  auth: AuthContext,
  query: UsageQuery,
): Promise<UsageSummary> {
  const range = resolveRange(deps, query);
  const records = await readRecords(deps, callerPartitions(auth), range, query);
  return { ...rangeOut(range), totals: stats(records), quota: await quota(deps, auth) };
}

export async function usageTimeseries(
  deps: CoreDeps,
  auth: AuthContext,
  query: UsageTimeseriesQuery,
): Promise<UsageTimeseries> {
  const range = resolveRange(deps, query);
  const records = await readRecords(deps, callerPartitions(auth), range, query);
  return timeseries(range, query.granularity, records);
}

export async function usageBreakdown(
  deps: CoreDeps,
  auth: AuthContext,
  query: UsageBreakdownQuery,
): Promise<UsageBreakdown> {
  const range = resolveRange(deps, query);
  const records = await readRecords(deps, callerPartitions(auth), range, query);
  return { ...rangeOut(range), group_by: query.group_by, groups: breakdown(records, query.group_by) };
}

export async function usageTenants(
  deps: CoreDeps,
  auth: AuthContext,
  query: UsageTenantsQuery,
): Promise<UsageTenants> {
  const range = resolveRange(deps, query);
  const records = await readRecords(deps, callerPartitions(auth), range, query);
  const tenants = breakdown(records, 'tenant').map(({ key, ...rest }) => ({ tenant: key, ...rest }));
  return { ...rangeOut(range), tenants };
}

export async function usageLogs(
  deps: CoreDeps,
  auth: AuthContext,
  query: UsageLogsQuery,
): Promise<UsageLogs> {
  const range = resolveRange(deps, query);
  return logs(deps, callerPartitions(auth), range, query, { showKeyIds: true });
}

/**
 * Compute used by sandboxed runs (code_runtime and managed_loop engines). The gateway's records do
 * not say which engine ran; the sandbox work fills `compute_ms` on the records of sandboxed runs,
 * and this report sums it (a record without it counts 0, so direct-LLM calls add nothing).
 */
export async function usageCompute(
  deps: CoreDeps,
  auth: AuthContext,
  query: UsageQuery,
): Promise<UsageCompute> {
  const range = resolveRange(deps, query);
  const records = await readRecords(deps, callerPartitions(auth), range, query);
  type Entry = { agent: string; sandbox_calls: number; compute_ms: number };
  const agents = new Map<string, Entry>();
  const days = new Map<string, { sandbox_calls: number; compute_ms: number; agents: Map<string, Entry> }>();
  // Every UTC day of the range, so a day without sandbox runs shows as zeros.
  const firstDay = Date.parse(range.from.toISOString().slice(0, 10));
  for (let t = firstDay; t <= range.to.getTime(); t += 86_400_000) {
    days.set(new Date(t).toISOString().slice(0, 10), { sandbox_calls: 0, compute_ms: 0, agents: new Map() });
  }
  let total = 0;
  let calls = 0;
  const add = (map: Map<string, Entry>, agent: string, ms: number) => {
    const entry = map.get(agent) ?? { agent, sandbox_calls: 0, compute_ms: 0 };
    entry.sandbox_calls++;
    entry.compute_ms += ms;
    map.set(agent, entry);
  };
  for (const r of records) {
    const ms = computeMs(r);
    if (ms <= 0) continue;
    total += ms;
    calls++;
    const agent = `${r.org}/${r.agent}`;
    add(agents, agent, ms);
    const day = days.get(r.at.slice(0, 10));
    if (day) {
      day.sandbox_calls++;
      day.compute_ms += ms;
      add(day.agents, agent, ms);
    }
  }
  const sorted = (m: Map<string, Entry>) =>
    [...m.values()].sort((a, b) => b.compute_ms - a.compute_ms || compareKeys(a.agent, b.agent));
  return {
    ...rangeOut(range),
    sandbox_calls: calls,
    compute_ms: total,
    compute_hours: Math.round((total / HOUR_MS) * 10_000) / 10_000,
    agents: sorted(agents),
    days: [...days.entries()].map(([day, d]) => ({
      day,
      sandbox_calls: d.sandbox_calls,
      compute_ms: d.compute_ms,
      agents: sorted(d.agents),
    })),
  };
}

// ---- author side ----

export async function authorUsageSummary(
  deps: CoreDeps,
  auth: AuthContext,
  query: AuthorUsageQuery,
): Promise<AuthorUsageSummary> {
  const range = resolveRange(deps, query);
  const workspaces = await ownedWorkspaces(deps, auth, query.workspace_id);
  const records = await readRecords(deps, authorPartitions(workspaces), range, query);
  return {
    ...rangeOut(range),
    workspaces,
    callers: new Set(records.map((r) => r.caller_account_id)).size,
    totals: stats(records),
    earnings_credits: records.reduce((sum, r) => sum + (r.credits ?? 0), 0),
  };
}

export async function authorUsageTimeseries(
  deps: CoreDeps,
  auth: AuthContext,
  query: AuthorUsageTimeseriesQuery,
): Promise<UsageTimeseries> {
  const range = resolveRange(deps, query);
  const workspaces = await ownedWorkspaces(deps, auth, query.workspace_id);
  const records = await readRecords(deps, authorPartitions(workspaces), range, query);
  return timeseries(range, query.granularity, records);
}

export async function authorUsageBreakdown(
  deps: CoreDeps,
  auth: AuthContext,
  query: AuthorUsageBreakdownQuery,
): Promise<UsageBreakdown> {
  const range = resolveRange(deps, query);
  const workspaces = await ownedWorkspaces(deps, auth, query.workspace_id);
  const records = await readRecords(deps, authorPartitions(workspaces), range, query);
  return { ...rangeOut(range), group_by: query.group_by, groups: breakdown(records, query.group_by) };
}

/** Callers appear by account id only: another account's key ids are never shown to an author. */
export async function authorUsageLogs(
  deps: CoreDeps,
  auth: AuthContext,
  query: AuthorUsageLogsQuery,
): Promise<UsageLogs> {
  const range = resolveRange(deps, query);
  const workspaces = await ownedWorkspaces(deps, auth, query.workspace_id);
  return logs(deps, authorPartitions(workspaces), range, query, { showKeyIds: false });
}

// ---- range ----

/**
 * The range a query asks for, in UTC, both ends inclusive. A date `from` is its day's first
 * instant, a date `to` its last. Defaults: `to` now, `from` 7 days before `to`. `to` later than now
 * reads as now. `from` may reach back to the start of the UTC day 90 days ago (the retention).
 */
export function resolveRange(deps: CoreDeps, query: RangeQuery): Range {
  const now = deps.clock.now();
  const earliest = new Date(startOfDay(now.getTime() - MAX_RANGE_DAYS * DAY_MS));
  const issues: { field: string; message: string }[] = [];
  const retention = `must be within the last ${MAX_RANGE_DAYS} days (not before ${earliest.toISOString()}); older calls are not kept`;

  let to = now;
  if (query.to !== undefined) {
    const asked = parseInstant(query.to, 'end');
    if (asked < earliest) issues.push({ field: 'query.to', message: retention });
    if (asked < now) to = asked;
  }
  let from: Date;
  if (query.from !== undefined) {
    from = parseInstant(query.from, 'start');
    if (from > now) issues.push({ field: 'query.from', message: 'must not be in the future' });
    else if (from < earliest) issues.push({ field: 'query.from', message: retention });
    else if (from > to) issues.push({ field: 'query.to', message: 'must not be before from' });
  } else {
    from = new Date(Math.max(to.getTime() - DEFAULT_RANGE_DAYS * DAY_MS, earliest.getTime()));
  }
  if (issues.length > 0) throw invalidInput(issues);
  return { from, to };
}

function parseInstant(value: string, end: 'start' | 'end'): Date {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const day = Date.parse(`${value}T00:00:00.000Z`);
    return new Date(end === 'start' ? day : day + DAY_MS - 1);
  }
  return new Date(Date.parse(value));
}

const startOfDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;
const startOfHour = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;

const rangeOut = (range: Range) => ({ from: range.from.toISOString(), to: range.to.toISOString() });

// ---- reading ----

function callerPartitions(auth: AuthContext): Partition[] {
  return [{ pk: callRecordKeys.callerPk(auth.accountId) }];
}

function authorPartitions(workspaceIds: string[]): Partition[] {
  return workspaceIds.map((id) => ({ index: 'gsi1', pk: callRecordKeys.authorPk(id) }));
}

/**
 * The workspaces whose agents' calls an author sees: the one asked for (the caller must own it:
 * not a member is 404, a member who is not an owner 403, as everywhere), or every workspace the
 * caller owns.
 */
async function ownedWorkspaces(
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
    pk: keys.membershipsOfAccount(auth.accountId),
  });
  return memberships.filter((m) => m.role === 'owner').map((m) => String(m.workspace_id));
}

function skBounds(range: Range): [string, string] {
  return [range.from.toISOString(), `${range.to.toISOString()}#${SK_MAX}`];
}

function matches(record: CallRecord, filters: Filters): boolean {
  if (filters.agent !== undefined && `${record.org}/${record.agent}` !== filters.agent) return false;
  if (filters.tenant !== undefined && (record.tenant ?? NONE) !== filters.tenant) return false;
  return true;
}

async function readRecords(
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
async function logs(
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

// ---- aggregation ----

function computeMs(record: CallRecord): number {
  const ms = (record as CallRecord & { compute_ms?: unknown }).compute_ms;
  return typeof ms === 'number' && Number.isFinite(ms) && ms > 0 ? Math.round(ms) : 0;
}

/** Plain code-unit order (as the store sorts keys), so results do not depend on the locale. */
function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function stats(records: CallRecord[]): UsageStats {
  const out: UsageStats = {
    calls: records.length,
    successes: 0,
    errors: 0,
    timeouts: 0,
    errors_by_code: {},
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
    avg_duration_ms: null,
    p95_duration_ms: null,
  };
  const durations: number[] = [];
  for (const r of records) {
    if (r.status === 'success') out.successes++;
    else {
      if (r.status === 'timeout') out.timeouts++;
      else out.errors++;
      const code = r.error_code ?? (r.status === 'timeout' ? 'TIMEOUT' : 'INTERNAL_ERROR');
      out.errors_by_code[code] = (out.errors_by_code[code] ?? 0) + 1;
    }
    out.input_tokens += num(r.input_tokens);
    out.output_tokens += num(r.output_tokens);
    out.total_tokens += num(r.total_tokens);
    durations.push(num(r.duration_ms));
  }
  if (durations.length > 0) {
    durations.sort((a, b) => a - b);
    out.avg_duration_ms = Math.round(durations.reduce((s, d) => s + d, 0) / durations.length);
    out.p95_duration_ms = Math.round(durations[Math.ceil(0.95 * durations.length) - 1] as number);
  }
  return out;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

function timeseries(range: Range, granularity: Granularity, records: CallRecord[]): UsageTimeseries {
  const [floor, step] = granularity === 'hour' ? [startOfHour, HOUR_MS] : [startOfDay, DAY_MS];
  const byBucket = new Map<number, CallRecord[]>();
  for (let t = floor(range.from.getTime()); t <= range.to.getTime(); t += step) byBucket.set(t, []);
  for (const r of records) byBucket.get(floor(Date.parse(r.at)))?.push(r);
  return {
    ...rangeOut(range),
    granularity,
    buckets: [...byBucket].map(([start, rs]) => ({ start: new Date(start).toISOString(), ...stats(rs) })),
  };
}

const GROUP_KEY: Record<GroupBy, (r: CallRecord) => string> = {
  agent: (r) => `${r.org}/${r.agent}`,
  version: (r) => `${r.org}/${r.agent}/${r.version}`,
  status: (r) => r.status,
  provider: (r) => r.provider ?? NONE,
  model: (r) => r.model ?? NONE,
  tenant: (r) => r.tenant ?? NONE,
  endpoint: (r) => `${r.org}/${r.agent}/${r.endpoint}`,
  caller: (r) => r.caller_account_id,
};

function breakdown(records: CallRecord[], groupBy: GroupBy): (UsageStats & { key: string })[] {
  const groups = new Map<string, CallRecord[]>();
  for (const r of records) {
    const key = GROUP_KEY[groupBy](r);
    const list = groups.get(key);
    if (list) list.push(r);
    else groups.set(key, [r]);
  }
  return [...groups]
    .map(([key, rs]) => ({ key, ...stats(rs) }))
    .sort((a, b) => b.calls - a.calls || compareKeys(a.key, b.key));
}

async function quota(deps: CoreDeps, auth: AuthContext): Promise<Quota> {
  const [state, used] = await Promise.all([rateLimitState(deps, auth), readDailyCalls(deps, auth.accountId)]);
  return {
    tier: auth.tier,
    limit: state.limit,
    used,
    remaining: state.remaining,
    reset: state.reset,
    reset_at: new Date(state.reset * 1000).toISOString(),
  };
}
