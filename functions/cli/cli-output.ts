/**
 * How commands print data: with --json one JSON document (for scripts: `jq`, pipes), otherwise a
 * table or key-value lines for people (cli-table3, borders off so columns stay easy to cut). A
 * value is one line: its control characters, newlines included, are shown escaped
 * (terminal-text.ts), so a name cannot drive the terminal or start a fake row.
 */
import Table from 'cli-table3';
import type { CliContext } from './cli-context.ts';
import { escapeControls } from './terminal-text.ts';

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
}

/** Prints `data` as JSON, or `rows` as a table under `columns` (a note when there are none). */
export function printList<T>(
  ctx: CliContext,
  data: unknown,
  rows: T[],
  columns: Column<T>[],
  empty = 'none',
): void {
  if (ctx.json) {
    printJson(ctx, data);
    return;
  }
  if (rows.length === 0) {
    ctx.note(`(${empty})`);
    return;
  }
  const table = new Table({
    head: columns.map((c) => c.header),
    chars: {
      top: '',
      'top-mid': '',
      'top-left': '',
      'top-right': '',
      bottom: '',
      'bottom-mid': '',
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: '  ',
    },
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
  });
  for (const row of rows) table.push(columns.map((c) => cell(c.value(row))));
  ctx.out(
    table
      .toString()
      .split('\n')
      .map((l) => l.trimEnd())
      .join('\n'),
  );
}

/** Prints `data` as JSON, or `fields` as aligned "name  value" lines. */
export function printRecord(ctx: CliContext, data: unknown, fields: [string, unknown][]): void {
  if (ctx.json) {
    printJson(ctx, data);
    return;
  }
  const width = Math.max(...fields.map(([k]) => k.length));
  ctx.out(fields.map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`).join('\n'));
}

export function printJson(ctx: CliContext, data: unknown): void {
  ctx.out(JSON.stringify(data, null, 2));
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (typeof v === 'object') return escapeControls(JSON.stringify(v));
  return escapeControls(String(v));
}
