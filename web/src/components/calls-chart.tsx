export interface DayBucket {
  start: string;
  calls: number;
  errors: number;
  timeouts: number;
}

const WIDTH = 560;
const HEIGHT = 160;
const PAD = { top: 8, right: 8, bottom: 22, left: 32 };

/**
 * Calls and failures (errors and timeouts) per day, as an inline SVG: a few hundred bytes of
 * markup instead of a chart library in the first load. The picture's label says the totals; the
 * day-by-day numbers are a table under it, for anyone who wants them exact (or cannot see bars).
 */
export function CallsChart({ buckets }: { buckets: DayBucket[] }) {
  const max = Math.max(1, ...buckets.map((b) => b.calls));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, buckets.length);
  const barW = Math.max(2, slot * 0.7);
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const day = (iso: string) => iso.slice(5, 10);
  const total = buckets.reduce((n, b) => n + b.calls, 0);
  const failedTotal = buckets.reduce((n, b) => n + b.errors + b.timeouts, 0);
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`Calls per day over ${buckets.length} days: ${total} calls, ${failedTotal} failed`}
      >
        <line class="axis" x1={PAD.left} x2={WIDTH - PAD.right} y1={y(0)} y2={y(0)} />
        <text class="tick" x={PAD.left - 4} y={y(max) + 4} text-anchor="end">
          {max}
        </text>
        <text class="tick" x={PAD.left - 4} y={y(0)} text-anchor="end">
          0
        </text>
        {buckets.map((b, i) => {
          const x = PAD.left + i * slot + (slot - barW) / 2;
          const failed = b.errors + b.timeouts;
          return (
            <g key={b.start}>
              <rect class="bar-calls" x={x} y={y(b.calls)} width={barW} height={y(0) - y(b.calls)}>
                <title>{`${day(b.start)}: ${b.calls} calls, ${failed} failed`}</title>
              </rect>
              {failed > 0 && (
                <rect class="bar-failed" x={x} y={y(failed)} width={barW} height={y(0) - y(failed)} />
              )}
              {(i === 0 || i === buckets.length - 1 || i % 7 === 0) && (
                <text class="tick" x={x + barW / 2} y={HEIGHT - 6} text-anchor="middle">
                  {day(b.start)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <span class="legend legend-calls">calls</span> <span class="legend legend-failed">failed</span> per
        UTC day
      </figcaption>
      <details>
        <summary>The numbers</summary>
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
      </details>
    </figure>
  );
}
