import { formatCount, formatDuration } from '../format.ts';

/** The counters the API gives every group of a breakdown (docs/usage.md "The counters"). */
export interface UsageGroup {
  key: string;
  calls: number;
  successes: number;
  errors: number;
  timeouts: number;
  total_tokens: number;
  avg_duration_ms: number | null;
  p95_duration_ms: number | null;
}

/**
 * Usage split by one key (agent, tenant, caller), most calls first as the API orders it: a table
 * whose calls column carries a bar of its share, so the numbers stay exact text (screen readers,
 * tests) and the picture comes free.
 */
export function BreakdownTable({
  groups,
  keyLabel,
  testId,
  empty,
}: {
  groups: UsageGroup[];
  keyLabel: string;
  testId: string;
  empty: string;
}) {
  if (groups.length === 0) return <p class="muted">{empty}</p>;
  const max = Math.max(1, ...groups.map((g) => g.calls));
  return (
    <div class="table-scroll">
      <table data-testid={testId} class="breakdown">
        <thead>
          <tr>
            <th scope="col">{keyLabel}</th>
            <th scope="col">Calls</th>
            <th scope="col">Succeeded</th>
            <th scope="col">Failed</th>
            <th scope="col">Tokens</th>
            <th scope="col">Avg duration</th>
            <th scope="col">p95 duration</th>
          </tr>
        </thead>
        <tbody>
          {groups.map((g) => (
            <tr key={g.key}>
              <th scope="row">
                <code>{g.key}</code>
              </th>
              <td class="bar-cell">
                <span class="share" aria-hidden="true" style={{ width: `${(g.calls / max) * 100}%` }} />
                <span class="share-value">{formatCount(g.calls)}</span>
              </td>
              <td>{formatCount(g.successes)}</td>
              <td class={g.errors + g.timeouts > 0 ? 'bad' : undefined}>
                {formatCount(g.errors + g.timeouts)}
              </td>
              <td>{formatCount(g.total_tokens)}</td>
              <td>{formatDuration(g.avg_duration_ms)}</td>
              <td>{formatDuration(g.p95_duration_ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
