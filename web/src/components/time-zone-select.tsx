/**
 * The IANA time zones this browser knows, UTC first: the platform accepts IANA names only (no
 * abbreviations such as EST; docs/cron.md), and these are them. A zone the browser does not list
 * (a schedule saved elsewhere with an older name) stays selectable.
 */
function zones(current: string): string[] {
  const known = Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC');
  const all = ['UTC', ...known];
  return all.includes(current) ? all : [current, ...all];
}

export function TimeZoneSelect({
  id,
  value,
  onChange,
}: {
  id: string;
  value: string;
  onChange: (zone: string) => void;
}) {
  return (
    <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
      {zones(value).map((z) => (
        <option key={z} value={z}>
          {z}
        </option>
      ))}
    </select>
  );
}
