import { useEffect, useState } from 'preact/hooks';

type CronModule = typeof import('../../../functions/shared/cron.ts');

/**
 * The platform's own cron module (its parser's messages, Unix day-field semantics and croner's
 * time-zone and DST rules), loaded on first use so croner stays out of the first load.
 */
let cronModule: Promise<CronModule> | undefined;
function loadCron(): Promise<CronModule> {
  cronModule ??= import('../../../functions/shared/cron.ts');
  return cronModule;
}

const RUNS_SHOWN = 5;

type Preview = { state: 'loading' } | { state: 'invalid'; message: string } | { state: 'ok'; runs: Date[] };

/** A run time as the schedule's zone reads it, with the zone's abbreviation. */
function inZone(at: Date, timeZone: string): string {
  return new Intl.DateTimeFormat(undefined, {
    timeZone,
    weekday: 'short',
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  }).format(at);
}

/**
 * The next five run times of `expression` in `timeZone`, worked out in the browser as the user
 * types, or why the expression is refused (the same message the API would give).
 */
export function CronNextRuns({ expression, timeZone }: { expression: string; timeZone: string }) {
  const [preview, setPreview] = useState<Preview>({ state: 'loading' });
  useEffect(() => {
    let current = true;
    loadCron().then(
      ({ parseCron, isValidTimeZone, nextRuns }) => {
        if (!current) return;
        const parsed = parseCron(expression);
        if (!parsed.ok) return setPreview({ state: 'invalid', message: parsed.message });
        if (!isValidTimeZone(timeZone))
          return setPreview({ state: 'invalid', message: `time zone ${timeZone} is not an IANA name` });
        setPreview({ state: 'ok', runs: nextRuns(parsed.cron, timeZone, new Date(), RUNS_SHOWN) });
      },
      (err: unknown) =>
        current && setPreview({ state: 'invalid', message: `could not load: ${String(err)}` }),
    );
    return () => {
      current = false;
    };
  }, [expression, timeZone]);

  return (
    <div class="cron-next-runs" aria-live="polite" data-testid="cron-next-runs">
      {preview.state === 'loading' && <p class="muted">Working out the next runs…</p>}
      {preview.state === 'invalid' && <p class="bad">Cron expression: {preview.message}</p>}
      {preview.state === 'ok' && (
        <>
          <p class="muted">
            Next {RUNS_SHOWN} runs ({timeZone}):
          </p>
          <ol>
            {preview.runs.map((at) => (
              <li key={at.toISOString()}>
                <time dateTime={at.toISOString()}>{inZone(at, timeZone)}</time>
              </li>
            ))}
          </ol>
        </>
      )}
    </div>
  );
}
