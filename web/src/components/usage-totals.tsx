import type { ComponentChildren } from 'preact';
import { formatCount, formatDuration } from '../format.ts';

/** The range's totals as the API counts them (docs/usage.md "The counters"). */
export interface UsageTotalsData {
  calls: number;
  successes: number;
  errors: number;
  timeouts: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  avg_duration_ms: number | null;
  p95_duration_ms: number | null;
}

/**
 * The totals as a description list (term, value): readable as text, and each value findable by
 * its term. `extra` adds the side's own figures (the author's callers and earnings).
 */
export function UsageTotals({ totals, extra }: { totals: UsageTotalsData; extra?: ComponentChildren }) {
  return (
    <dl class="totals" data-testid="usage-totals">
      <div>
        <dt>Calls</dt>
        <dd>{formatCount(totals.calls)}</dd>
      </div>
      <div>
        <dt>Succeeded</dt>
        <dd>{formatCount(totals.successes)}</dd>
      </div>
      <div>
        <dt>Errors</dt>
        <dd class={totals.errors > 0 ? 'bad' : undefined}>{formatCount(totals.errors)}</dd>
      </div>
      <div>
        <dt>Timeouts</dt>
        <dd class={totals.timeouts > 0 ? 'bad' : undefined}>{formatCount(totals.timeouts)}</dd>
      </div>
      <div>
        <dt>Tokens (in / out)</dt>
        <dd>
          {formatCount(totals.total_tokens)}{' '}
          <span class="muted">
            ({formatCount(totals.input_tokens)} / {formatCount(totals.output_tokens)})
          </span>
        </dd>
      </div>
      <div>
        <dt>Duration (avg / p95)</dt>
        <dd>
          {formatDuration(totals.avg_duration_ms)} / {formatDuration(totals.p95_duration_ms)}
        </dd>
      </div>
      {extra}
    </dl>
  );
}
