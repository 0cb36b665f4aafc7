import { DayChart } from './day-chart.tsx';

export interface DayBucket {
  start: string;
  calls: number;
  errors: number;
  timeouts: number;
}

/**
 * Calls and failures (errors and timeouts) per UTC day: the bars, and the day-by-day numbers as a
 * table under them.
 */
export function CallsChart({ buckets }: { buckets: DayBucket[] }) {
  const total = buckets.reduce((n, b) => n + b.calls, 0);
  const failedTotal = buckets.reduce((n, b) => n + b.errors + b.timeouts, 0);
  return (
    <DayChart
      label={`Calls per day over ${buckets.length} days: ${total} calls, ${failedTotal} failed`}
      legend={
        <>
          <span class="legend legend-calls">calls</span> <span class="legend legend-failed">failed</span> per
          UTC day
        </>
      }
      bars={buckets.map((b) => {
        const failed = b.errors + b.timeouts;
        return {
          day: b.start,
          value: b.calls,
          part: failed,
          title: `${b.start.slice(5, 10)}: ${b.calls} calls, ${failed} failed`,
        };
      })}
    >
      <table data-testid="calls-by-day">
        <thead>
          <tr>
            <th scope="col">Day (UTC)</th>
            <th scope="col">Calls</th>
            <th scope="col">Errors</th>
            <th scope="col">Timeouts</th>
          </tr>
        </thead>
        <tbody>
          {buckets.map((b) => (
            <tr key={b.start}>
              <th scope="row">{b.start.slice(0, 10)}</th>
              <td>{b.calls}</td>
              <td>{b.errors}</td>
              <td>{b.timeouts}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </DayChart>
  );
}
