import type { ComponentChildren } from 'preact';

/** One day's bar: its value, and optionally a part of it drawn over it in the second colour. */
export interface DayBar {
  /** The UTC day, or an ISO instant within it (a bucket's start). */
  day: string;
  value: number;
  part?: number;
  /** The bar's tooltip. */
  title: string;
}

const WIDTH = 560;
const HEIGHT = 160;
const PAD = { top: 8, right: 8, bottom: 22, left: 40 };

/**
 * A value per day as an inline SVG bar chart: a few hundred bytes of markup instead of a chart
 * library in the first load. `label` says what it shows in words (the picture's accessible name);
 * `children` are the exact numbers, as a table under it, for anyone who cannot see bars.
 */
export function DayChart({
  bars,
  label,
  legend,
  formatValue = (n) => n.toLocaleString(),
  children,
}: {
  bars: DayBar[];
  label: string;
  legend: ComponentChildren;
  formatValue?: (n: number) => string;
  children: ComponentChildren;
}) {
  const max = Math.max(0, ...bars.map((b) => b.value));
  const top = max > 0 ? max : 1;
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, bars.length);
  const barW = Math.max(2, slot * 0.7);
  const y = (v: number) => PAD.top + plotH - (v / top) * plotH;
  const tickEvery = Math.max(7, Math.ceil(bars.length / 6));
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={label}>
        <line class="axis" x1={PAD.left} x2={WIDTH - PAD.right} y1={y(0)} y2={y(0)} />
        <text class="tick" x={PAD.left - 4} y={y(top) + 4} text-anchor="end">
          {formatValue(max)}
        </text>
        <text class="tick" x={PAD.left - 4} y={y(0)} text-anchor="end">
          0
        </text>
        {bars.map((b, i) => {
          const x = PAD.left + i * slot + (slot - barW) / 2;
          const part = b.part ?? 0;
          return (
            <g key={b.day}>
              <rect class="bar-calls" x={x} y={y(b.value)} width={barW} height={y(0) - y(b.value)}>
                <title>{b.title}</title>
              </rect>
              {part > 0 && <rect class="bar-failed" x={x} y={y(part)} width={barW} height={y(0) - y(part)} />}
              {(i === 0 ||
                i === bars.length - 1 ||
                // Not so close to the last day's label that the two overlap.
                (i % tickEvery === 0 && bars.length - 1 - i >= tickEvery / 2)) && (
                <text class="tick" x={x + barW / 2} y={HEIGHT - 6} text-anchor="middle">
                  {b.day.slice(5, 10)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption>{legend}</figcaption>
      <details>
        <summary>The numbers</summary>
        {children}
      </details>
    </figure>
  );
}
