import { useQuery } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import { DateRangeForm, type DayRange, lastDays } from '../components/date-range-form.tsx';
import { QueryState } from '../components/query-state.tsx';
import { type PageProps, pageHref } from '../page-links.ts';
import { useSession } from '../session.tsx';
import { AuthorUsage } from './usage-author.tsx';
import { CallerUsage } from './usage-caller.tsx';

/** The range shown first: the last 30 days, today included. */
const DEFAULT_DAYS = 30;

/**
 * Usage over a range of days, from either side: "My calls" (`#/usage`, every call the account
 * made) or "Calls to my agents" (`#/usage/author`, every account's calls to the agents of the
 * workspaces the caller owns, with earnings). The range carries over between the two.
 */
export function Usage({ params }: PageProps) {
  const { client } = useSession();
  const author = params[0] === 'author';
  // The platform's now (the summary's `to`) picks "today", not the browser's clock.
  const now = useQuery({ queryKey: ['usage', 'summary'], queryFn: () => client.usage.summary() });
  const [chosen, setChosen] = useState<DayRange | null>(null);
  const range = chosen ?? (now.data ? lastDays(now.data.to, DEFAULT_DAYS) : null);
  return (
    <div class="usage">
      <h1>Usage</h1>
      <nav aria-label="Usage views" class="tabs">
        <a href={pageHref('/usage')} aria-current={author ? undefined : 'page'}>
          My calls
        </a>
        <a href={pageHref('/usage', 'author')} aria-current={author ? 'page' : undefined}>
          Calls to my agents
        </a>
      </nav>
      {!range && <QueryState query={now} what="usage" />}
      {range && (
        <>
          <DateRangeForm value={range} onChange={setChosen} />
          {author ? <AuthorUsage range={range} /> : <CallerUsage range={range} />}
        </>
      )}
    </div>
  );
}
