import { type QueryKey, useInfiniteQuery } from '@tanstack/react-query';

/** One page of an offset-paged list ({items, total}) or of a cursor-paged one ({items, next}). */
export interface OffsetPage<T> {
  items: T[];
  total: number;
}
export interface CursorPage<T> {
  items: T[];
  next: string | null;
}

/**
 * A long list read a page at a time (long lists paginated): the first page on load, the
 * next on "Load more". For the API's offset lists (`limit`, `offset`, `total`).
 */
export function useOffsetList<T>(
  queryKey: QueryKey,
  fetchPage: (page: { limit: number; offset: number }) => Promise<OffsetPage<T>>,
  pageSize = 25,
) {
  const query = useInfiniteQuery({
    queryKey,
    initialPageParam: 0,
    queryFn: ({ pageParam }) => fetchPage({ limit: pageSize, offset: pageParam }),
    getNextPageParam: (last, pages) => {
      const seen = pages.reduce((n, p) => n + p.items.length, 0);
      return last.items.length > 0 && seen < last.total ? seen : undefined;
    },
  });
  const items = query.data?.pages.flatMap((p) => p.items) ?? [];
  const total = query.data?.pages.at(-1)?.total;
  return { query, items, total };
}

/** The same for the API's cursor lists (`cursor`, `next_cursor`): call records, logs, runs. */
export function useCursorList<T>(
  queryKey: QueryKey,
  fetchPage: (cursor: string | undefined) => Promise<CursorPage<T>>,
) {
  const query = useInfiniteQuery({
    queryKey,
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => fetchPage(pageParam),
    getNextPageParam: (last) => last.next ?? undefined,
  });
  const items = query.data?.pages.flatMap((p) => p.items) ?? [];
  return { query, items, total: undefined as number | undefined };
}

/** "Load more" under a paged list, with how many are shown; nothing once everything is. */
export function LoadMore({
  list,
}: {
  list: {
    query: { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown };
    items: unknown[];
    total: number | undefined;
  };
}) {
  const { query, items, total } = list;
  return (
    <p class="load-more">
      <span class="muted">
        {total === undefined ? `${items.length} shown` : `${items.length} of ${total.toLocaleString()} shown`}
      </span>{' '}
      {query.hasNextPage && (
        <button
          type="button"
          class="secondary"
          disabled={query.isFetchingNextPage}
          onClick={() => query.fetchNextPage()}
        >
          {query.isFetchingNextPage ? 'Loading…' : 'Load more'}
        </button>
      )}
    </p>
  );
}
