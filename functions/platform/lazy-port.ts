/**
 * lazyPort: an adapter built on its first use behind its port's type. The composition roots
 * (deps.ts, aws-deps.ts, local-deps.ts) wrap the adapters most Lambdas never call in it, so their
 * SDK clients stay out of the cold start (and, with lib/lambda-bundling.ts, out of the bundle).
 */

/** The names of T's methods. */
type MethodOf<T> = {
  [K in keyof T]-?: NonNullable<T[K]> extends (...args: never[]) => unknown ? K : never;
}[keyof T];

/**
 * An adapter built on its first use: the listed methods forward to it. Lambdas that never call a
 * port then never import its SDK client (lib/lambda-bundling.ts leaves it out of their bundles).
 * Every member of the port is either listed (`lazy`) or given in `eager`: the type of `eager` is
 * the port without the listed methods, so a method added to the port and forgotten here is a
 * compile error, not an undefined function at run time.
 */
export function lazyPort<T extends object>() {
  return <L extends MethodOf<T>>(build: () => Promise<T>, lazy: readonly L[], eager: Omit<T, L>): T =>
    lazyProxy<T>(build, lazy, eager);
}

function lazyProxy<T extends object>(
  build: () => Promise<T>,
  lazy: readonly PropertyKey[],
  eager: object,
): T {
  let instance: Promise<T> | undefined;
  const get = () => {
    // A failed build (a throttled secret read, say) is tried again on the next call, not kept.
    instance ??= build().catch((err: unknown) => {
      instance = undefined;
      throw err;
    });
    return instance;
  };
  const proxy = { ...eager } as Record<PropertyKey, unknown>;
  for (const m of lazy) {
    // The type cannot refuse a member given both ways (its check is deferred for generic calls):
    // the lazy one would shadow the eager one, so it is refused here, where every test builds deps.
    if (m in proxy) throw new Error(`lazyPort: ${String(m)} is both lazy and eager`);
    proxy[m] = async (...args: unknown[]) => {
      const target = await get();
      return ((target as Record<PropertyKey, unknown>)[m] as (...a: unknown[]) => unknown).apply(
        target,
        args,
      );
    };
  }
  return proxy as T;
}
