import { useState } from 'preact/hooks';

/** A range of whole UTC days, as the usage routes take them (`2026-06-15`, both days included). */
export interface DayRange {
  from: string;
  to: string;
}

/** The last `days` UTC days ending on `now`'s day (the platform's clock, not the browser's). */
export function lastDays(now: string, days: number): DayRange {
  const end = new Date(now);
  const start = new Date(Date.UTC(end.getUTCFullYear(), end.getUTCMonth(), end.getUTCDate() - (days - 1)));
  return { from: start.toISOString().slice(0, 10), to: end.toISOString().slice(0, 10) };
}

/**
 * Two labelled date fields and a "Show" button. The range is checked by the API, not here (at
 * most 90 days back, not in the future, `to` not before `from`), so its message is the one shown.
 */
export function DateRangeForm({ value, onChange }: { value: DayRange; onChange: (range: DayRange) => void }) {
  const [from, setFrom] = useState(value.from);
  const [to, setTo] = useState(value.to);
  return (
    <form
      class="toolbar range-form"
      onSubmit={(e) => {
        e.preventDefault();
        onChange({ from, to });
      }}
    >
      <label>
        From (UTC){' '}
        <input
          type="date"
          name="from"
          value={from}
          onInput={(e) => setFrom(e.currentTarget.value)}
          required
        />
      </label>
      <label>
        To (UTC){' '}
        <input type="date" name="to" value={to} onInput={(e) => setTo(e.currentTarget.value)} required />
      </label>
      <button type="submit">Show</button>
    </form>
  );
}
