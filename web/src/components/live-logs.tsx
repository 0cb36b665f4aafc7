import { useEffect, useRef, useState } from 'preact/hooks';
import {
  LOOK_BACK_MS,
  type LogLine,
  latest,
  SeenLogLines,
} from '../../../functions/shared/log-follow-window.ts';
import { ApiError } from '../api-error.tsx';

export interface LogPage {
  logs: LogLine[];
  next_cursor: string | null;
}
export type FetchLogPage = (query: { since?: string; limit?: number; cursor?: string }) => Promise<LogPage>;

const FIRST_PAGE = 200;
/** Lines kept on the page; the oldest go first (the API still has them: "Load older lines" is for the start). */
const KEPT = 2000;
/** Pages one poll follows at most: a burst bigger than this is shown in part, not fetched forever. */
const POLL_PAGES = 5;

/**
 * A log that follows itself, as `agenthost logs --follow` does (functions/shared/log-follow-window.ts):
 * the newest page first, then every `intervalMs` a poll with `since` the newest line seen (less a
 * look-back for late writes), each line shown once. "Load older lines" pages back from the first.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: one component: its polling, paging and rendering share the component's hooks
export function LiveLogs({ fetchPage, intervalMs = 2000 }: { fetchPage: FetchLogPage; intervalMs?: number }) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [older, setOlder] = useState<string | null>(null);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [following, setFollowing] = useState(true);
  const box = useRef<HTMLDivElement>(null);
  // The latest fetchPage without restarting the loop when the caller re-renders.
  const fetchRef = useRef(fetchPage);
  fetchRef.current = fetchPage;

  useEffect(() => {
    if (!following) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const seen = new SeenLogLines();
    let floor: string | undefined;
    const add = (page: LogLine[]) => {
      const fresh: LogLine[] = [];
      seen.take(page, (l) => fresh.push(l));
      if (fresh.length > 0) setLines((prev) => [...prev, ...fresh].slice(-KEPT));
    };
    const poll = async () => {
      try {
        const since = latest(seen.lookBackFrom(LOOK_BACK_MS), floor);
        const got: LogLine[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page: LogPage = await fetchRef.current({
            ...(since ? { since } : {}),
            limit: 5000,
            ...(cursor ? { cursor } : {}),
          });
          got.push(...page.logs);
          cursor = page.next_cursor;
        } while (cursor && ++pages < POLL_PAGES && !stopped);
        if (stopped) return;
        add(got);
        setError(null);
      } catch (err) {
        if (!stopped) setError(err);
      }
      if (!stopped) timer = setTimeout(poll, intervalMs);
    };
    const start = async () => {
      try {
        const first = await fetchRef.current({ limit: FIRST_PAGE });
        if (stopped) return;
        setLines([]);
        add(first.logs);
        setOlder(first.next_cursor);
        // A full first page left older lines unshown: the look-back must not show them as new.
        floor = first.next_cursor ? first.logs.at(-1)?.timestamp : undefined;
        setLoaded(true);
        setError(null);
        timer = setTimeout(poll, intervalMs);
      } catch (err) {
        if (stopped) return;
        setError(err);
        timer = setTimeout(start, intervalMs);
      }
    };
    void start();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [following, intervalMs]);

  // Keeps the newest line in view while following, unless the reader scrolled up to read.
  useEffect(() => {
    const el = box.current;
    if (el && following && el.scrollHeight - el.scrollTop - el.clientHeight < 80)
      el.scrollTop = el.scrollHeight;
  }, [lines, following]);

  const loadOlder = async () => {
    if (!older) return;
    setLoadingOlder(true);
    try {
      const page = await fetchRef.current({ limit: FIRST_PAGE, cursor: older });
      setLines((prev) => [...[...page.logs].reverse(), ...prev]);
      setOlder(page.next_cursor);
      setError(null);
    } catch (err) {
      setError(err);
    } finally {
      setLoadingOlder(false);
    }
  };

  return (
    <div class="live-logs">
      <div class="toolbar">
        <label class="checkbox">
          <input
            type="checkbox"
            checked={following}
            onChange={(e) => setFollowing(e.currentTarget.checked)}
          />{' '}
          Follow new lines
        </label>
        {older && (
          <button type="button" class="secondary" disabled={loadingOlder} onClick={loadOlder}>
            {loadingOlder ? 'Loading…' : 'Load older lines'}
          </button>
        )}
        <span class="muted" aria-live="polite">
          {lines.length} {lines.length === 1 ? 'line' : 'lines'}
          {following ? ', following' : ''} (times in UTC)
        </span>
      </div>
      {error !== null && <ApiError error={error} title="Logs" />}
      {!loaded && error === null && <p aria-live="polite">Loading logs…</p>}
      {loaded && lines.length === 0 && <p class="muted">No log lines yet.</p>}
      {lines.length > 0 && (
        <div
          class="log-lines"
          ref={box}
          role="log"
          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus, or a keyboard cannot scroll it.
          tabIndex={0}
          aria-label="Log lines"
          data-testid="log-lines"
        >
          {lines.map((l, i) => (
            <div key={`${l.timestamp}-${i}`} class={`log-line level-${l.level}`}>
              <time dateTime={l.timestamp}>{l.timestamp.slice(11, 23)}</time>{' '}
              <span class="log-level">{l.level.toUpperCase()}</span>{' '}
              <span class="log-message">{l.message}</span>
            </div>
          ))}
        </div>
      )}
    </div>
  );
}
