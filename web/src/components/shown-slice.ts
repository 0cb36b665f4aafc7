import { useState } from 'preact/hooks';

/**
 * A list the API answers whole (secrets, API keys, members) shown a page at a time, with the shape
 * LoadMore takes: the first `pageSize` items, then `pageSize` more on each "Load more". Nothing is
 * fetched again; only what is drawn grows.
 */
export function useShownSlice<T>(all: T[] | undefined, pageSize = 25) {
  const [shown, setShown] = useState(pageSize);
  const list = all ?? [];
  return {
    items: list.slice(0, shown),
    total: all === undefined ? undefined : list.length,
    query: {
      hasNextPage: shown < list.length,
      isFetchingNextPage: false,
      fetchNextPage: () => setShown((n) => n + pageSize),
    },
  };
}
