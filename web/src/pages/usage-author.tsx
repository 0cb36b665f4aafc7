import { useQuery } from '@tanstack/react-query';
import { BreakdownTable } from '../components/breakdown-table.tsx';
import { CallRecords } from '../components/call-records.tsx';
import { CallsChart } from '../components/calls-chart.tsx';
import type { DayRange } from '../components/date-range-form.tsx';
import { QueryState } from '../components/query-state.tsx';
import { UsageTotals } from '../components/usage-totals.tsx';
import { formatCount, formatCredits } from '../format.ts';
import { useSession } from '../session.tsx';

/**
 * The author's side (`/author-usage…`): every account's calls, in the range, to the agents of every
 * workspace the caller owns, and what callers paid for them (earnings, refunded calls excluded).
 * Callers appear by account id only, as the API gives them.
 */
export function AuthorUsage({ range }: { range: DayRange }) {
  const { client } = useSession();
  const key = ['usage', 'author', range.from, range.to];
  const summary = useQuery({
    queryKey: [...key, 'summary'],
    queryFn: () => client.authorUsage.summary(range),
  });
  const series = useQuery({
    queryKey: [...key, 'timeseries'],
    queryFn: () => client.authorUsage.timeseries({ ...range, granularity: 'day' }),
  });
  const byAgent = useQuery({
    queryKey: [...key, 'by-agent'],
    queryFn: () => client.authorUsage.breakdown({ ...range, group_by: 'agent' }),
  });
  const byCaller = useQuery({
    queryKey: [...key, 'by-caller'],
    queryFn: () => client.authorUsage.breakdown({ ...range, group_by: 'caller' }),
  });
  const byTenant = useQuery({
    queryKey: [...key, 'by-tenant'],
    queryFn: () => client.authorUsage.breakdown({ ...range, group_by: 'tenant' }),
  });
  const groups = [
    { id: 'agent', title: 'By agent', label: 'Agent', query: byAgent },
    { id: 'caller', title: 'By caller', label: 'Caller (account)', query: byCaller },
    { id: 'tenant', title: 'By tenant', label: 'Tenant', query: byTenant },
  ];

  return (
    <>
      <p class="muted">
        Calls from every account to the agents of the workspaces you own
        {summary.data ? ` (${summary.data.workspaces.length})` : ''}.
      </p>
      <section aria-labelledby="author-totals-heading">
        <h2 id="author-totals-heading">Totals and earnings</h2>
        <QueryState query={summary} what="the totals" />
        {summary.data && (
          <UsageTotals
            totals={summary.data.totals}
            extra={
              <>
                <div>
                  <dt>Callers</dt>
                  <dd>{formatCount(summary.data.callers)}</dd>
                </div>
                <div>
                  <dt>Earnings</dt>
                  <dd data-testid="author-earnings">{formatCredits(summary.data.earnings_credits)}</dd>
                </div>
              </>
            }
          />
        )}
      </section>

      <section aria-labelledby="author-by-day-heading">
        <h2 id="author-by-day-heading">Calls by day</h2>
        <QueryState query={series} what="calls by day" />
        {series.data && <CallsChart buckets={series.data.buckets} />}
      </section>

      {groups.map((g) => (
        <section key={g.id} aria-labelledby={`author-by-${g.id}-heading`}>
          <h2 id={`author-by-${g.id}-heading`}>{g.title}</h2>
          <QueryState query={g.query} what={`calls ${g.title.toLowerCase()}`} />
          {g.query.data && (
            <BreakdownTable
              groups={g.query.data.groups}
              keyLabel={g.label}
              testId={`author-by-${g.id}`}
              empty="No calls to your agents in this range."
            />
          )}
        </section>
      ))}

      <section aria-labelledby="author-records-heading">
        <h2 id="author-records-heading">Call records</h2>
        <CallRecords
          queryKey={[...key, 'logs']}
          showCaller
          fetchPage={(cursor, status) =>
            client.authorUsage.logs({
              ...range,
              limit: 50,
              ...(cursor ? { cursor } : {}),
              ...(status ? { status } : {}),
            })
          }
        />
      </section>
    </>
  );
}
