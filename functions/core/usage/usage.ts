import type { CoreDeps } from '../../ports/core-deps.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { nextUtcMidnight, readDailyCalls, sandboxQuotaState } from './daily-usage.ts';
import { breakdown, compareKeys, computeMs, stats, timeseries } from './usage-aggregation.ts';
import { HOUR_MS, rangeOut, resolveRange } from './usage-range.ts';
import { authorPartitions, callerPartitions, logs, ownedWorkspaces, readRecords } from './usage-reads.ts';
import type {
  AuthorUsageBreakdownQuery,
  AuthorUsageLogsQuery,
  AuthorUsageQuery,
  AuthorUsageSummary,
  AuthorUsageTimeseriesQuery,
  Quota,
  UsageBreakdown,
  UsageBreakdownQuery,
  UsageCompute,
  UsageLogs,
  UsageLogsQuery,
  UsageQuery,
  UsageSummary,
  UsageTenants,
  UsageTenantsQuery,
  UsageTimeseries,
  UsageTimeseriesQuery,
} from './usage-schemas.ts';
/**
 * Usage reports over the call records the gateway writes (call-records.ts). The caller side reads
 * the caller's partition (`ACCOUNT#<id>#CALLS`); the author side reads GSI1 (`WS#<id>#CALLS`) of
 * each workspace the caller owns. Every read is a Query bounded by the range on the sort key
 * (`<ISO time>#<request_id>`), never a Scan; filters and aggregation happen here.
 */

// ---- caller side ----

export async function usageSummary(
  deps: CoreDeps,
  auth: AuthContext,
  query: UsageQuery,
): Promise<UsageSummary> {
  const range = resolveRange(deps, query);
  const records = await readRecords(deps, callerPartitions(auth), range, query);
  const [calls, sandbox] = await Promise.all([quota(deps, auth), sandboxQuota(deps, auth)]);
  return { ...rangeOut(range), totals: stats(records), quota: calls, sandbox_quota: sandbox };
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

/** Today's sandbox runs (code runtime and managed loop): a quota of their own (spec "Limits"). */
async function sandboxQuota(deps: CoreDeps, auth: AuthContext): Promise<Quota> {
  const { limit, used, reset } = await sandboxQuotaState(deps, auth);
  return quotaOf(auth, limit, used, reset);
}

/** Today's agent calls against the tier's daily limit (the X-RateLimit-* headers' quota). */
async function quota(deps: CoreDeps, auth: AuthContext): Promise<Quota> {
  const used = await readDailyCalls(deps, auth.accountId);
  return quotaOf(auth, TIER_LIMITS[auth.tier].dailyCalls, used, nextUtcMidnight(deps.clock.now()));
}

function quotaOf(auth: AuthContext, limit: number, used: number, reset: number): Quota {
  return {
    tier: auth.tier,
    limit,
    used,
    remaining: Math.max(0, limit - used),
    reset,
    reset_at: new Date(reset * 1000).toISOString(),
  };
}
