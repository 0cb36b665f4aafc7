/**
 * `value` and everything in it frozen: an object handed to several readers (the embedded store's
 * shared reads: ports/store.ts, ReadOptions), which a reader that changed it by mistake would change
 * for the others; frozen, such a change throws instead (modules run in strict mode).
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const key in value) deepFreeze(value[key]);
    Object.freeze(value);
  }
  return value;
}
