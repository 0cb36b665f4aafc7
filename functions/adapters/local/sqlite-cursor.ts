import { InvalidCursorError } from '../../ports/store.ts';

/** Where a page of a query ended: the last item's key, and its index sort key for an index query. */
export interface Cursor {
  pk: string;
  sk: string;
  isk?: string;
}

/** The opaque `cursor` a query page answers (base64url JSON). */
export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

/** A cursor given back; anything this store did not make is InvalidCursorError (a 400). */
export function decodeCursor(s: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Cursor;
    if (typeof c.pk === 'string' && typeof c.sk === 'string') return c;
  } catch {
    // fall through
  }
  throw new InvalidCursorError();
}
