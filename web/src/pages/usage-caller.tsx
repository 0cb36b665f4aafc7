import { useQuery } from '@tanstack/react-query';
import { BreakdownTable } from '../components/breakdown-table.tsx';
import { CallRecords } from '../components/call-records.tsx';
import { CallsChart } from '../components/calls-chart.tsx';
import { ComputeUsage } from '../components/compute-usage.tsx';
import type { DayRange } from '../components/date-range-form.tsx';
import { QueryState } from '../components/query-state.tsx';
import { UsageTotals } from '../components/usage-totals.tsx';
import { useSession } from '../session.tsx';

/**
 * The caller's side (`/usage…`): every call this account made in the range, to any agent — the
 * totals, calls per day, by agent, by tenant (X-Platform-Tenant), sandbox compute, and the records.
 */
export function CallerUsage({ range }: { range: DayRange }) {
  const { client } = useSession();
  const key = ['usage', 'caller', range.from, range.to];
  const summary = useQuery({ queryKey: [...key, 'summary'], queryFn: () => client.usage.summary(range) });
  const series = useQuery({
    queryKey: [...key, 'timeseries'],
    queryFn: () => client.usage.timeseries({ ...range, granularity: 'day' }),
  });
  const byAgent = useQuery({
    queryKey: [...key, 'by-agent'],
    queryFn: () => client.usage.breakdown({ ...range, group_by: 'agent' }),
  });
  const byTenant = useQuery({ queryKey: [...key, 'tenants'], queryFn: () => client.usage.tenants(range) });
  const compute = useQuery({ queryKey: [...key, 'compute'], queryFn: () => client.usage.compute(range) });

  return (
    <>
      <section aria-labelledby="totals-heading">
        <h2 id="totals-heading">Totals</h2>
        <QueryState query={summary} what="the totals" />
        {summary.data && <UsageTotals totals={summary.data.totals} />}
      </section>

      <section aria-labelledby="by-day-heading">
        <h2 id="by-day-heading">Calls by day</h2>
        <QueryState query={series} what="calls by day" />
        {series.data && <CallsChart buckets={series.data.buckets} />}
      </section>

      <section aria-labelledby="by-agent-heading">
        <h2 id="by-agent-heading">By agent</h2>
        <QueryState query={byAgent} what="calls by agent" />
        {byAgent.data && (
          <BreakdownTable
            groups={byAgent.data.groups}
            keyLabel="Agent"
            testId="usage-by-agent"
            empty="No calls in this range."
          />
        )}
      </section>

      <section aria-labelledby="by-tenant-heading">
        <h2 id="by-tenant-heading">By tenant</h2>
        <p class="muted">
          The <code>X-Platform-Tenant</code> header your calls sent; <code>(none)</code> for calls without it.
        </p>
        <QueryState query={byTenant} what="calls by tenant" />
        {byTenant.data && (
          <BreakdownTable
            groups={byTenant.data.tenants.map((t) => ({ ...t, key: t.tenant }))}
            keyLabel="Tenant"
            testId="usage-by-tenant"
            empty="No calls in this range."
          />
        )}
      </section>

      <section aria-labelledby="compute-heading">
        <h2 id="compute-heading">Sandbox compute</h2>
        <QueryState query={compute} what="compute usage" />
        {compute.data && <ComputeUsage compute={compute.data} />}
      </section>

      <section aria-labelledby="records-heading">
        <h2 id="records-heading">Call records</h2>
        <CallRecords
          queryKey={[...key, 'logs']}
          fetchPage={(cursor, status) =>
            client.usage.logs({
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
