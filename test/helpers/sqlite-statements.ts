import { StatementSync } from 'node:sqlite';

/**
 * How many times SQLite ran a statement starting with `sql` through `get` (point reads,
 * `PRAGMA data_version`) while `fn` ran, in any connection of this process: every prepared
 * statement shares StatementSync's prototype.
 */
export async function statementsRun(sql: string, fn: () => Promise<unknown>): Promise<number> {
  const original = StatementSync.prototype.get;
  let count = 0;
  StatementSync.prototype.get = function (this: StatementSync, ...args: unknown[]) {
    if (this.sourceSQL.startsWith(sql)) count++;
    return Reflect.apply(original, this, args);
  } as typeof original;
  try {
    await fn();
  } finally {
    StatementSync.prototype.get = original;
  }
  return count;
}
