import * as z from 'zod';
import { answerBytes, INLINE_OUTPUT_BYTES } from './output-answer.ts';

/** Where the next page starts, or null at the end: a page is bounded by size as well as `limit`. */
export const nextOffsetSchema = z
  .number()
  .int()
  .nullable()
  .describe(
    'Offset of the next page, null when this is the last; a page may hold fewer than `limit` items when they are large (docs/http.md "Pages")',
  );

/** The page of `all` at `offset`, at most `limit` items and bounded by size (sizedPage). */
export function sizedSlice<T>(
  all: readonly T[],
  offset: number,
  limit: number,
): { page: T[]; next_offset: number | null } {
  return sizedPage(all.slice(offset, offset + limit), offset, all.length);
}

/**
 * A list page bounded by size as well as count (docs/http.md "Pages"): on AWS an answer over a
 * Lambda response's 6 MB is a 502, and a page of 50 schedules with large input_data once came to
 * 7.7 MB. A page takes its items in order while the answer, counted as a Lambda response carries
 * it (answerBytes: quotes and backslashes twice), stays within INLINE_OUTPUT_BYTES, and always at
 * least one item. The answer's `total` is unchanged, and `next_offset` says where the next page
 * starts (null at the end), so a client that pages by offset until `total` (the SDK's
 * offsetPages, the CLI) reads every item once. Measured in core: the same pages on both
 * deployments.
 */
export function sizedPage<T>(
  items: readonly T[],
  offset: number,
  total: number,
  budget = INLINE_OUTPUT_BYTES,
): { page: T[]; next_offset: number | null } {
  const page: T[] = [];
  let used = 0;
  for (const item of items) {
    const size = itemBytes(item);
    if (page.length > 0 && used + size > budget) break;
    page.push(item);
    used += size;
  }
  return { page, next_offset: nextOffset(offset, page.length, total) };
}

/**
 * sizedPage over items that must be made ready to answer first (a run's output read back from the
 * bundle store), one at a time: a page of large items reads only what it answers, never fifty
 * stored outputs at once.
 */
export async function sizedPageOf<T, U>(
  items: readonly T[],
  offset: number,
  total: number,
  answer: (item: T) => Promise<U>,
  budget = INLINE_OUTPUT_BYTES,
): Promise<{ page: U[]; next_offset: number | null }> {
  const page: U[] = [];
  let used = 0;
  for (const item of items) {
    const answered = await answer(item);
    const size = itemBytes(answered);
    if (page.length > 0 && used + size > budget) break;
    page.push(answered);
    used += size;
  }
  return { page, next_offset: nextOffset(offset, page.length, total) };
}

/** An item's bytes in a Lambda response's body, with the comma before the next. */
function itemBytes(item: unknown): number {
  const json = JSON.stringify(item) ?? 'null';
  return answerBytes(json, Buffer.byteLength(json)) + 1;
}

function nextOffset(offset: number, count: number, total: number): number | null {
  return offset + count < total ? offset + count : null;
}
