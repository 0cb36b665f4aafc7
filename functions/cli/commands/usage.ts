/**
 * `agenthost usage`: the caller's agent calls (docs/usage.md). Without --by, the totals of the
 * range and today's quotas; --by hour|day, the timeseries; --by agent (or version, status, …),
 * the breakdown. The range is the API's own (--from/--to, ISO 8601 or a date; default the last
 * 7 days), which also checks it, so a bad value is the API's 400 naming the field (exit 2).
 */
import { type Command, Option } from 'commander';
import { CALLER_GROUPS, GRANULARITIES } from '../../core/usage/usage-names.ts';
import type { CliContext, Client } from '../cli-context.ts';
import { printList, printRecord } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';

type Summary = Awaited<ReturnType<Client['usage']['summary']>>;
type Stats = Summary['totals'];
type Granularity = (typeof GRANULARITIES)[number];
type Group = (typeof CALLER_GROUPS)[number];

const BY = [...GRANULARITIES, ...CALLER_GROUPS] as const;

interface UsageFlags {
  by?: (typeof BY)[number];
  from?: string;
  to?: string;
  agent?: string;
  tenant?: string;
}

/** The counters every row shows, after its key column. */
function counterColumns<T extends Stats>() {
  return [
    { header: 'CALLS', value: (s: T) => s.calls },
    { header: 'OK', value: (s: T) => s.successes },
    { header: 'ERRORS', value: (s: T) => s.errors },
    { header: 'TIMEOUTS', value: (s: T) => s.timeouts },
    { header: 'TOKENS', value: (s: T) => s.total_tokens },
    { header: 'AVG MS', value: (s: T) => s.avg_duration_ms },
    { header: 'P95 MS', value: (s: T) => s.p95_duration_ms },
  ];
}

function quotaLine(q: Summary['quota']): string {
  return `${q.used} of ${q.limit} used, ${q.remaining} left (resets ${q.reset_at})`;
}

function showSummary(ctx: CliContext, s: Summary): void {
  const t = s.totals;
  const errorCodes = Object.entries(t.errors_by_code)
    .map(([code, n]) => `${code} ${n}`)
    .join(', ');
  printRecord(ctx, s, [
    ['from', s.from],
    ['to', s.to],
    ['calls', `${t.calls} (${t.successes} ok, ${t.errors} errors, ${t.timeouts} timeouts)`],
    ['errors by code', errorCodes || 'none'],
    ['tokens', `${t.total_tokens} (${t.input_tokens} in, ${t.output_tokens} out)`],
    [
      'duration',
      t.avg_duration_ms === null ? null : `avg ${t.avg_duration_ms} ms, p95 ${t.p95_duration_ms} ms`,
    ],
    ['tier', s.quota.tier],
    ['calls today', quotaLine(s.quota)],
    ['sandbox runs today', quotaLine(s.sandbox_quota)],
  ]);
}

export function registerUsage(program: Command, cli: CliRuntime): void {
  program
    .command('usage')
    .description(
      'Your agent calls: totals and today’s quotas; per day with --by day, per agent with --by agent',
    )
    .addOption(
      new Option('--by <what>', 'per period (hour, day) or per group (agent, version, status, …)').choices(
        BY,
      ),
    )
    .option('--from <time>', 'the range start: 2026-06-15T12:00:00Z or 2026-06-15 (default: 7 days ago)')
    .option('--to <time>', 'the range end, inclusive; a date means its whole day (default: now)')
    .option('--agent <org/name>', 'only calls to this agent (every version)')
    .option('--tenant <tenant>', 'only calls with this X-Platform-Tenant value; (none) for calls without')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  agenthost usage',
        '  agenthost usage --by day --from 2026-06-01 --to 2026-06-15',
        '  agenthost usage --by agent --json',
        'The range reaches back at most 90 days (call records are kept that long).',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, flags: UsageFlags) => {
        const client = await ctx.client();
        const range = {
          ...(flags.from !== undefined ? { from: flags.from } : {}),
          ...(flags.to !== undefined ? { to: flags.to } : {}),
          ...(flags.agent !== undefined ? { agent: flags.agent } : {}),
          ...(flags.tenant !== undefined ? { tenant: flags.tenant } : {}),
        };
        if (flags.by === undefined) {
          showSummary(ctx, await client.usage.summary(range));
          return;
        }
        if ((GRANULARITIES as readonly string[]).includes(flags.by)) {
          const granularity = flags.by as Granularity;
          const series = await client.usage.timeseries({ ...range, granularity });
          type Bucket = (typeof series.buckets)[number];
          // A day reads best as its date; an hour needs its time.
          const start = (b: Bucket) => (granularity === 'day' ? b.start.slice(0, 10) : b.start);
          printList(ctx, series, series.buckets, [
            { header: granularity === 'day' ? 'DAY' : 'HOUR', value: start },
            ...counterColumns<Bucket>(),
          ]);
          if (!ctx.json) ctx.note(`(UTC ${granularity}s from ${series.from} to ${series.to})`);
          return;
        }
        const group_by = flags.by as Group;
        const breakdown = await client.usage.breakdown({ ...range, group_by });
        type Row = (typeof breakdown.groups)[number];
        printList(
          ctx,
          breakdown,
          breakdown.groups,
          [{ header: group_by.toUpperCase(), value: (g: Row) => g.key }, ...counterColumns<Row>()],
          `no calls from ${breakdown.from} to ${breakdown.to}`,
        );
        if (!ctx.json && breakdown.groups.length > 0)
          ctx.note(`(calls from ${breakdown.from} to ${breakdown.to})`);
      }),
    );
}
