// Aggregating call records into usage reports: totals and percentiles, time buckets, groupings.

import type { CallRecord } from './call-records.ts';
import { DAY_MS, HOUR_MS, type Range, rangeOut, startOfDay, startOfHour } from './usage-range.ts';
import {
  type Granularity,
  type GroupBy,
  NONE,
  type UsageStats,
  type UsageTimeseries,
} from './usage-schemas.ts';

export function computeMs(record: CallRecord): number {
  const ms = (record as CallRecord & { compute_ms?: unknown }).compute_ms;
  return typeof ms === 'number' && Number.isFinite(ms) && ms > 0 ? Math.round(ms) : 0;
}

/** Plain code-unit order (as the store sorts keys), so results do not depend on the locale. */
export function compareKeys(a: string, b: string): number {
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

export function timeseries(range: Range, granularity: Granularity, records: CallRecord[]): UsageTimeseries {
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

export function breakdown(records: CallRecord[], groupBy: GroupBy): (UsageStats & { key: string })[] {
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
