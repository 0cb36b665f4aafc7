/**
 * Async iteration over list endpoints. Lists page by limit and offset and answer the total
 * ({tasks, total}, {agents, total} …); call records page by cursor ({logs, next_cursor}).
 */

/** Every item of an offset-paged list, fetching `pageSize` at a time until `total` is reached. */
export async function* offsetPages<T>(
  fetchPage: (page: { limit: number; offset: number }) => Promise<{ items: T[]; total: number }>,
  pageSize = 50,
): AsyncGenerator<T> {
  for (let offset = 0; ; ) {
    const { items, total } = await fetchPage({ limit: pageSize, offset });
    yield* items;
    offset += items.length;
    if (items.length === 0 || offset >= total) return;
  }
}

/** Every item of a cursor-paged list, following next_cursor until it is null. */
export async function* cursorPages<T>(
  fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; next: string | null }>,
): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield* page.items;
    cursor = page.next ?? undefined;
  } while (cursor !== undefined);
}

/**
 * Every item of an offset-paged list answer (`{ [key]: items, total }`): the one helper the
 * generated `iterate…` methods share.
 */
export function offsetItems<K extends string, A extends { [P in K]: unknown[] } & { total: number }>(
  key: K,
  fetchPage: (page: { limit: number; offset: number }) => Promise<A>,
  pageSize = 50,
): AsyncGenerator<A[K][number]> {
  return offsetPages(async (page) => {
    const answer = await fetchPage(page);
    return { items: answer[key] as A[K][number][], total: answer.total };
  }, pageSize);
}

/**
 * Every item of a cursor-paged list answer (`{ [key]: items, next_cursor }`): the one helper the
 * generated `iterate…Logs` methods share.
 */
export function cursorItems<
  K extends string,
  A extends { [P in K]: unknown[] } & { next_cursor: string | null },
>(key: K, fetchPage: (cursor: string | undefined) => Promise<A>): AsyncGenerator<A[K][number]> {
  return cursorPages(async (cursor) => {
    const answer = await fetchPage(cursor);
    return { items: answer[key] as A[K][number][], next: answer.next_cursor };
  });
}
