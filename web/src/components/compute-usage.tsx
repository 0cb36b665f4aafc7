import { formatCount, formatDuration } from '../format.ts';
import { DayChart } from './day-chart.tsx';

/** GET /usage/compute's answer, as far as the page shows it. */
export interface ComputeUsageData {
  sandbox_calls: number;
  compute_ms: number;
  compute_hours: number;
  agents: { agent: string; sandbox_calls: number; compute_ms: number }[];
  days: { day: string; sandbox_calls: number; compute_ms: number }[];
}

/**
 * Sandbox compute (code-runtime and managed-loop runs): the totals, seconds per UTC day as bars
 * with the numbers under them, and the agents that used it. Direct-LLM calls use none, so a range
 * without any says so instead of drawing an empty chart.
 */
export function ComputeUsage({ compute }: { compute: ComputeUsageData }) {
  const seconds = (ms: number) => Math.round(ms / 100) / 10;
  return (
    <>
      <p data-testid="compute-totals">
        <strong>{formatCount(compute.sandbox_calls)}</strong> sandbox{' '}
        {compute.sandbox_calls === 1 ? 'run' : 'runs'}, <strong>{formatDuration(compute.compute_ms)}</strong>{' '}
        of compute ({compute.compute_hours} hours)
      </p>
      {compute.compute_ms === 0 ? (
        <p class="muted">
          No sandbox compute in this range: prompt agents call the model directly, in no sandbox.
        </p>
      ) : (
        <DayChart
          label={`Sandbox compute per day over ${compute.days.length} days: ${seconds(compute.compute_ms)} seconds in ${compute.sandbox_calls} runs`}
          legend={<span class="legend legend-calls">seconds of sandbox compute per UTC day</span>}
          formatValue={(s) => `${s} s`}
          bars={compute.days.map((d) => ({
            day: d.day,
            value: seconds(d.compute_ms),
            title: `${d.day.slice(5)}: ${formatDuration(d.compute_ms)} in ${d.sandbox_calls} runs`,
          }))}
        >
          <table data-testid="compute-by-day">
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                <th scope="col">Sandbox runs</th>
                <th scope="col">Compute</th>
              </tr>
            </thead>
            <tbody>
              {compute.days.map((d) => (
                <tr key={d.day}>
                  <th scope="row">{d.day}</th>
                  <td>{formatCount(d.sandbox_calls)}</td>
                  <td>{formatDuration(d.compute_ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </DayChart>
      )}
      {compute.agents.length > 0 && (
        <div class="table-scroll">
          <table data-testid="compute-by-agent">
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Sandbox runs</th>
                <th scope="col">Compute</th>
              </tr>
            </thead>
            <tbody>
              {compute.agents.map((a) => (
                <tr key={a.agent}>
                  <th scope="row">
                    <code>{a.agent}</code>
                  </th>
                  <td>{formatCount(a.sandbox_calls)}</td>
                  <td>{formatDuration(a.compute_ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
