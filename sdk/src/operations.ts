/**
 * Which operation of the OpenAPI document each client function sends. The generated resources
 * (generated/resources.ts) and the hand-written extras (client.ts) register every function they put
 * on the client: an operation's one method, or a helper over it (paging, a bound call).
 * test/sdk/sdk-operations.test.ts walks the client with this and fails when an operation has no method
 * or two, or when a function on the client is registered as neither.
 */

export type Registered = { operationId: string; role: 'method' | 'helper' };

/** Any function: every parameter type accepts `never`. */
type AnyFunction = (...args: never[]) => unknown;

const registry = new WeakMap<AnyFunction, Registered>();

/** `fn` is the client's one method for `operationId`. */
export function method<F extends AnyFunction>(operationId: string, fn: F): F {
  registry.set(fn, { operationId, role: 'method' });
  return fn;
}

/** `fn` is a helper over `operationId`'s method (it pages it, or binds its arguments). */
export function helper<F extends AnyFunction>(operationId: string, fn: F): F {
  registry.set(fn, { operationId, role: 'helper' });
  return fn;
}

/** What `fn` was registered as, if anything. */
export function registered(fn: unknown): Registered | undefined {
  return typeof fn === 'function' ? registry.get(fn as AnyFunction) : undefined;
}
