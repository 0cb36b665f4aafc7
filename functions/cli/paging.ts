/**
 * `--limit`, `--offset` and `--all` for the API's offset-paged lists (schedules, runs, events,
 * services: `{items, total}` answers): one page by default, as the API gives it, or every page
 * with --all; a note on stderr says when more remain, so a person knows the table is not all.
 */
import { type Command, Option } from 'commander';
import { offsetPages } from '../../sdk/src/paginate.ts';
import type { CliContext } from './cli-context.ts';
import { intArg } from './option-parsers.ts';

export interface PageFlags {
  limit?: number;
  offset?: number;
  all?: boolean;
}

export type FetchPage<T> = (page: {
  limit: number;
  offset: number;
}) => Promise<{ items: T[]; total: number }>;

export const DEFAULT_PAGE = 50;

export function pageOptions(command: Command, what: string): Command {
  return command
    .addOption(
      new Option('--limit <n>', `${what} to show, 1-200 (default ${DEFAULT_PAGE})`).argParser(intArg(1, 200)),
    )
    .addOption(new Option('--offset <n>', `skip the first n ${what}`).argParser(intArg(0, 1_000_000)))
    .addOption(new Option('--all', `every ${what}, page after page`).conflicts(['limit', 'offset']));
}

/** The page the flags ask for (or every item, with --all), and the list's total. */
export async function readPages<T>(
  flags: PageFlags,
  fetchPage: FetchPage<T>,
): Promise<{ items: T[]; total: number }> {
  if (flags.all) {
    const items: T[] = [];
    for await (const item of offsetPages(fetchPage, 200)) items.push(item);
    return { items, total: items.length };
  }
  return fetchPage({ limit: flags.limit ?? DEFAULT_PAGE, offset: flags.offset ?? 0 });
}

/** On stderr, when the page shown is not the whole list: how to see the rest. */
export function noteMore(ctx: CliContext, flags: PageFlags, shown: number, total: number): void {
  const offset = flags.offset ?? 0;
  if (ctx.json || flags.all || offset + shown >= total) return;
  ctx.note(`(${shown} of ${total} shown: --offset ${offset + shown} for the next page, --all for every one)`);
}
