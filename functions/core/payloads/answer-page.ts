import { answerBytes, INLINE_OUTPUT_BYTES } from './output-answer.ts';

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
    const json = JSON.stringify(item) ?? 'null';
    // The comma between items.
    const size = answerBytes(json, Buffer.byteLength(json)) + 1;
    if (page.length > 0 && used + size > budget) break;
    page.push(item);
    used += size;
  }
  const next = offset + page.length;
  return { page, next_offset: next < total ? next : null };
}
