import { useQuery } from '@tanstack/react-query';
import { ApiError } from '../api-error.tsx';
import { CallsChart } from '../components/calls-chart.tsx';
import { QuotaMeter } from '../components/quota-meter.tsx';
import { useSession } from '../session.tsx';

const DAYS = 14;
/** Failures shown: the newest, errors and timeouts alike. */
const FAILURES_SHOWN = 10;

/**
 * The first UTC day of the last `DAYS` days (today included), as the API's date form. `now` is the
 * platform's (the summary's `to`), not the browser's clock, which may be off or in another day.
 */
function rangeStart(now: Date): string {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (DAYS - 1)));
  return start.toISOString().slice(0, 10);
}

/**
 * What needs a look first: today's quotas, the last two weeks of calls, recent failures, and the
 * workspace's services and schedules that are not working. Usage is the caller's (every workspace);
 * services and schedules are the chosen workspace's.
 */
export function Overview() {
  const { client, workspaceId } = useSession();
  const summary = useQuery({ queryKey: ['usage', 'summary'], queryFn: () => client.usage.summary() });
  const from = summary.data ? rangeStart(new Date(summary.data.to)) : '';
  const series = useQuery({
    queryKey: ['usage', 'timeseries', from],
    queryFn: () => client.usage.timeseries({ from, granularity: 'day' }),
    enabled: from !== '',
  });
  const failures = useQuery({
    queryKey: ['usage', 'failures', from],
    enabled: from !== '',
    queryFn: async () => (await client.usage.logs({ from, status: 'failed', limit: FAILURES_SHOWN })).logs,
  });
  const services = useQuery({
    queryKey: ['services', workspaceId],
    queryFn: async () => {
      const all = [];
      for await (const s of client.services.iterate(workspaceId)) all.push(s);
      return all;
    },
  });
  const schedules = useQuery({
    queryKey: ['schedules', workspaceId],
    queryFn: async () => {
      const all = [];
      for await (const s of client.schedules.iterate(workspaceId)) all.push(s);
      return all;
    },
  });

  const unhealthy = services.data?.filter((s) => s.health_status !== 'healthy') ?? [];
  const autoDisabled = schedules.data?.filter((s) => s.auto_disabled) ?? [];

  return (
    <div class="overview">
      <h1>Overview</h1>

      <section aria-labelledby="quotas-heading">
        <h2 id="quotas-heading">Today</h2>
        {summary.isPending && <p>Loading today's usage…</p>}
        {summary.isError && <ApiError error={summary.error} title="Usage" />}
        {summary.data && (
          <div class="cards">
            <QuotaMeter id="quota-calls" label="Calls today" quota={summary.data.quota} />
            <QuotaMeter id="quota-sandbox" label="Sandbox runs today" quota={summary.data.sandbox_quota} />
          </div>
        )}
      </section>

      <section aria-labelledby="chart-heading">
        <h2 id="chart-heading">Calls, last {DAYS} days</h2>
        {series.isPending && !summary.isError && <p>Loading calls…</p>}
        {series.isError && <ApiError error={series.error} title="Calls by day" />}
        {series.data && <CallsChart buckets={series.data.buckets} />}
      </section>

      <section aria-labelledby="failures-heading">
        <h2 id="failures-heading">Recent failures</h2>
        {failures.isPending && !summary.isError && <p>Loading call records…</p>}
        {failures.isError && <ApiError error={failures.error} title="Call records" />}
        {failures.data &&
          (failures.data.length === 0 ? (
            <p class="ok">No failed calls in the last {DAYS} days.</p>
          ) : (
            <div class="table-scroll">
              <table data-testid="recent-failures">
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Agent</th>
                    <th scope="col">Status</th>
                    <th scope="col">Error code</th>
                    <th scope="col">HTTP</th>
                  </tr>
                </thead>
                <tbody>
                  {failures.data.map((log) => (
                    <tr key={log.request_id}>
                      <td>
                        <time dateTime={log.at}>{new Date(log.at).toLocaleString()}</time>
                      </td>
                      <td>
                        {log.org}/{log.agent}@{log.version}
                      </td>
                      <td>{log.status}</td>
                      <td>
                        <code>{log.error_code ?? '—'}</code>
                      </td>
                      <td>{log.http_status}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ))}
      </section>

      <div class="cards">
        <section aria-labelledby="services-heading" class="card">
          <h2 id="services-heading">Services not healthy</h2>
          {services.isPending && <p>Loading services…</p>}
          {services.isError && <ApiError error={services.error} title="Services" />}
          {services.data &&
            (unhealthy.length === 0 ? (
              <p class="ok">
                {services.data.length === 0
                  ? 'No services in this workspace.'
                  : `All ${services.data.length} services are healthy.`}
              </p>
            ) : (
              <ul data-testid="unhealthy-services">
                {unhealthy.map((s) => (
                  <li key={s.id}>
                    <strong>{s.name}</strong> ({s.agent}@{s.agent_version}): {s.state},{' '}
                    <span class="bad">{s.health_status}</span>
                  </li>
                ))}
              </ul>
            ))}
        </section>

        <section aria-labelledby="schedules-heading" class="card">
          <h2 id="schedules-heading">Schedules auto-disabled</h2>
          {schedules.isPending && <p>Loading schedules…</p>}
          {schedules.isError && <ApiError error={schedules.error} title="Schedules" />}
          {schedules.data &&
            (autoDisabled.length === 0 ? (
              <p class="ok">
                {schedules.data.length === 0
                  ? 'No schedules in this workspace.'
                  : 'None: every schedule is as its owner set it.'}
              </p>
            ) : (
              <ul data-testid="auto-disabled-schedules">
                {autoDisabled.map((s) => (
                  <li key={s.id}>
                    <strong>{s.agent}</strong> ({s.type === 'cron' ? s.cron_expression : 'webhook'}): disabled
                    after {s.consecutive_failures} {s.consecutive_failures === 1 ? 'failure' : 'failures'} in
                    a row
                    {s.last_status ? `, last ${s.last_status}` : ''}
                  </li>
                ))}
              </ul>
            ))}
        </section>
      </div>
    </div>
  );
}
