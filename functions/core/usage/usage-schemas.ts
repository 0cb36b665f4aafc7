import * as z from 'zod';
import { cursorParam, intParam } from '../../shared/query-params.ts';
import { CALL_RECORD_RETENTION_DAYS } from './call-record-retention.ts';
import { AUTHOR_GROUPS, CALL_STATUSES, CALLER_GROUPS, GRANULARITIES } from './usage-names.ts';

export { AUTHOR_GROUPS, CALL_STATUSES, CALLER_GROUPS, GRANULARITIES } from './usage-names.ts';

/**
 * Query and response schemas of /usage… (the caller's own calls) and /author-usage… (calls to the
 * caller's agents). The spec leaves both open; docs/usage.md is the reference. Range rules that
 * need the clock (not in the future, at most 90 days back, `to` not before `from`) are checked in
 * usage.ts, which reports them with the same field names (query.from, query.to).
 */

/** Default range: the last 7 days up to now. */
export const DEFAULT_RANGE_DAYS = 7;
/** How far back a range may reach: the retention of call records. */
export const MAX_RANGE_DAYS = CALL_RECORD_RETENTION_DAYS;
/** Tenant filter value and group key for calls sent without X-Platform-Tenant (and null provider/model). */
export const NONE = '(none)';

const INSTANT =
  /^(\d{4}-\d{2}-\d{2})(?:T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,9})?)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d))?$/i;

function isRealDay(day: string): boolean {
  const d = new Date(`${day}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === day;
}

/** An ISO 8601 timestamp with a zone (Z or ±hh:mm), or a bare date (YYYY-MM-DD, a UTC day). */
export const instant = z
  .string()
  .max(40)
  .refine((s) => {
    const m = INSTANT.exec(s);
    return m !== null && isRealDay(m[1] as string) && !Number.isNaN(Date.parse(s));
  }, 'must be an ISO 8601 timestamp with a zone (2026-06-15T12:00:00Z) or a date (2026-06-15)');

const range = {
  from: instant
    .optional()
    .describe(
      `Start of the range, inclusive (a date means its first instant, UTC). Default: ${DEFAULT_RANGE_DAYS} days before \`to\`. At most ${MAX_RANGE_DAYS} days back (the start of that UTC day); older calls are no longer kept`,
    ),
  to: instant
    .optional()
    .describe(
      'End of the range, inclusive (a date means through its last instant, UTC). Default and at most: now',
    ),
};

const filters = {
  agent: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9-]{0,63}\/[a-z0-9][a-z0-9-]{0,63}$/,
      'must be an agent address without version: org/name',
    )
    .optional()
    .describe('Only calls to this agent (org/name, every version)'),
  tenant: z
    .string()
    .min(1, 'must not be empty')
    .max(256)
    .optional()
    .describe(`Only calls sent with this X-Platform-Tenant value; \`${NONE}\` for calls sent without one`),
};

/**
 * The call records' own filter (not the aggregates': a summary by status is its counters). The
 * spec names no filters for /usage/logs; `failed` is what a person looking for trouble wants, an
 * error or a timeout, in one page (docs/decisions.md).
 */
const recordFilters = {
  status: z
    .enum([...CALL_STATUSES, 'failed'])
    .optional()
    .describe('Only records that ended so; `failed` is error or timeout'),
};

const workspaceId = {
  workspace_id: z
    .uuid('must be a workspace id (UUID)')
    .optional()
    .describe(
      'Only agents of this workspace (the caller must own it). Default: every workspace the caller owns',
    ),
};

const granularity = {
  granularity: z
    .enum(GRANULARITIES, `must be one of ${GRANULARITIES.join(', ')}`)
    .default('day')
    .describe('Bucket size (UTC hours or UTC days); default day'),
};

const paging = {
  limit: intParam(1, 200).default(50).describe('Page size, 1-200, default 50'),
  cursor: cursorParam(),
};

// ---- caller side (/usage…) ----

export const usageQuery = z.strictObject({ ...range, ...filters });
export const usageTimeseriesQuery = z.strictObject({ ...range, ...filters, ...granularity });
export const usageBreakdownQuery = z.strictObject({
  ...range,
  ...filters,
  group_by: z
    .enum(CALLER_GROUPS, `must be one of ${CALLER_GROUPS.join(', ')}`)
    .default('agent')
    .describe('What to group by; default agent'),
});
export const usageTenantsQuery = z.strictObject({ ...range, agent: filters.agent });
export const usageLogsQuery = z.strictObject({ ...range, ...filters, ...recordFilters, ...paging });
export const usageComputeQuery = usageQuery;

// ---- author side (/author-usage…) ----

export const authorUsageQuery = z.strictObject({ ...range, ...filters, ...workspaceId });
export const authorUsageTimeseriesQuery = z.strictObject({
  ...range,
  ...filters,
  ...workspaceId,
  ...granularity,
});
export const authorUsageBreakdownQuery = z.strictObject({
  ...range,
  ...filters,
  ...workspaceId,
  group_by: z
    .enum(AUTHOR_GROUPS, `must be one of ${AUTHOR_GROUPS.join(', ')}`)
    .default('agent')
    .describe('What to group by; caller groups by the calling account id. Default agent'),
});
export const authorUsageLogsQuery = z.strictObject({
  ...range,
  ...filters,
  ...recordFilters,
  ...workspaceId,
  ...paging,
});

// ---- responses ----

/** The counters every total, bucket and group carries. */
export const usageStatsSchema = z.object({
  calls: z.number().int(),
  successes: z.number().int(),
  errors: z.number().int().describe('Calls that ended with status error'),
  timeouts: z.number().int().describe('Calls that ended with status timeout'),
  errors_by_code: z
    .record(z.string(), z.number().int())
    .describe('Failed calls (errors and timeouts) by error code'),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  total_tokens: z.number().int(),
  avg_duration_ms: z.number().int().nullable().describe('Rounded mean; null without calls'),
  p95_duration_ms: z.number().int().nullable().describe('Nearest-rank 95th percentile; null without calls'),
});

const rangeOut = {
  from: z.string().describe('The range start used, ISO 8601 UTC'),
  to: z.string().describe('The range end used, ISO 8601 UTC'),
};

export const quotaSchema = z.object({
  tier: z.string(),
  limit: z.number().int().describe('Agent calls per UTC day'),
  used: z.number().int().describe('Calls counted today'),
  remaining: z.number().int(),
  reset: z.number().int().describe('Unix time (seconds) of the next UTC midnight, as X-RateLimit-Reset'),
  reset_at: z.string().describe('The same instant, ISO 8601'),
});

export const usageSummarySchema = z.object({
  ...rangeOut,
  totals: usageStatsSchema,
  quota: quotaSchema.describe('Today’s daily quota of agent calls (independent of the range)'),
  sandbox_quota: quotaSchema.describe(
    'Today’s daily quota of sandbox runs (code runtime and managed loop), counted apart from agent calls',
  ),
});

export const authorUsageSummarySchema = z.object({
  ...rangeOut,
  workspaces: z.array(z.string()).describe('Ids of the workspaces whose agents’ calls are counted'),
  callers: z.number().int().describe('Distinct calling accounts in the range'),
  totals: usageStatsSchema,
  earnings_credits: z
    .number()
    .int()
    .describe('Credits paid by callers for the paid agents’ calls in the range (refunded calls excluded)'),
});

export const usageBucketSchema = usageStatsSchema.extend({
  start: z.string().describe('Bucket start, ISO 8601 UTC'),
});

export const usageTimeseriesSchema = z.object({
  ...rangeOut,
  granularity: z.enum(GRANULARITIES),
  buckets: z.array(usageBucketSchema).describe('Every bucket of the range, oldest first; empty ones zero'),
});

export const usageGroupSchema = usageStatsSchema.extend({ key: z.string() });

export const usageBreakdownSchema = z.object({
  ...rangeOut,
  group_by: z.enum(AUTHOR_GROUPS),
  groups: z.array(usageGroupSchema).describe('Most calls first, then by key'),
});

export const usageTenantsSchema = z.object({
  ...rangeOut,
  tenants: z.array(usageStatsSchema.extend({ tenant: z.string() })).describe('Most calls first'),
});

/** A call record as the gateway wrote it, without the store's keys. */
export const callLogEntrySchema = z.looseObject({
  request_id: z.string(),
  at: z.string(),
  caller_account_id: z.string(),
  caller_key_id: z.string().optional().describe('Caller side only'),
  tenant: z.string().nullable(),
  agent_id: z.string(),
  org: z.string(),
  agent: z.string(),
  version: z.string(),
  workspace_id: z.string(),
  endpoint: z.string(),
  status: z.enum(CALL_STATUSES),
  error_code: z.string().nullable(),
  http_status: z.number().int(),
  duration_ms: z.number(),
  provider: z.string().nullable(),
  model: z.string().nullable(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  total_tokens: z.number().int(),
});

export const usageLogsSchema = z.object({
  ...rangeOut,
  logs: z.array(callLogEntrySchema).describe('Newest first'),
  next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last page'),
});

export const usageComputeSchema = z.object({
  ...rangeOut,
  sandbox_calls: z.number().int().describe('Calls that used sandbox compute (compute_ms > 0)'),
  compute_ms: z.number().int(),
  compute_hours: z.number().describe('compute_ms in hours, 4 decimals'),
  agents: z
    .array(
      z.object({
        agent: z.string().describe('org/name'),
        sandbox_calls: z.number().int(),
        compute_ms: z.number().int(),
      }),
    )
    .describe('Per agent, most compute first'),
  days: z
    .array(
      z.object({
        day: z.string().describe('UTC day, YYYY-MM-DD'),
        sandbox_calls: z.number().int(),
        compute_ms: z.number().int(),
        agents: z.array(
          z.object({ agent: z.string(), sandbox_calls: z.number().int(), compute_ms: z.number().int() }),
        ),
      }),
    )
    .describe('Per UTC day of the range (days without compute included, as zeros), each with its agents'),
});

export type UsageQuery = z.infer<typeof usageQuery>;
export type UsageTimeseriesQuery = z.infer<typeof usageTimeseriesQuery>;
export type UsageBreakdownQuery = z.infer<typeof usageBreakdownQuery>;
export type UsageTenantsQuery = z.infer<typeof usageTenantsQuery>;
export type UsageLogsQuery = z.infer<typeof usageLogsQuery>;
export type AuthorUsageQuery = z.infer<typeof authorUsageQuery>;
export type AuthorUsageTimeseriesQuery = z.infer<typeof authorUsageTimeseriesQuery>;
export type AuthorUsageBreakdownQuery = z.infer<typeof authorUsageBreakdownQuery>;
export type AuthorUsageLogsQuery = z.infer<typeof authorUsageLogsQuery>;
export type UsageStats = z.infer<typeof usageStatsSchema>;
export type Quota = z.infer<typeof quotaSchema>;
export type UsageSummary = z.infer<typeof usageSummarySchema>;
export type AuthorUsageSummary = z.infer<typeof authorUsageSummarySchema>;
export type UsageTimeseries = z.infer<typeof usageTimeseriesSchema>;
export type UsageBreakdown = z.infer<typeof usageBreakdownSchema>;
export type UsageTenants = z.infer<typeof usageTenantsSchema>;
export type CallLogEntry = z.infer<typeof callLogEntrySchema>;
export type UsageLogs = z.infer<typeof usageLogsSchema>;
export type UsageCompute = z.infer<typeof usageComputeSchema>;
export type Granularity = (typeof GRANULARITIES)[number];
export type GroupBy = (typeof AUTHOR_GROUPS)[number];
