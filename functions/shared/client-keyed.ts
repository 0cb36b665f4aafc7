/**
 * An empty record for names a client chose (query parameters, header names), without a prototype.
 * On an ordinary object `__proto__`, `constructor` or `toString` read or replace Object.prototype's
 * members (`?constructor=` answered 500: the query's multi-value map spread `Object` as if it were
 * an earlier value); here each is an ordinary entry, as in the event API Gateway hands Lambda (parsed
 * from JSON, where such names are own keys too).
 */
export function clientKeyed<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}
