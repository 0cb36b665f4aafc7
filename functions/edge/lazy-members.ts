/*
 * The edge's lazy Fetch objects (node-request.ts's Request and Headers, lazy-response.ts's
 * Response) answer what the edge asks from parts they hold, and forward anything else to the real
 * object, built once on first use. These define the forwarding members on such a prototype.
 */

/** Getters on `prototype` that read `names` from the real object `realOf` builds. */
export function forwardGetters<Self>(
  prototype: object,
  names: readonly string[],
  realOf: (self: Self) => object,
): void {
  for (const name of names) {
    Object.defineProperty(prototype, name, {
      get(this: Self) {
        return Reflect.get(realOf(this), name);
      },
    });
  }
}

/** Methods on `prototype` that call `names` on the real object `realOf` builds. */
export function forwardMethods<Self>(
  prototype: object,
  names: readonly (string | symbol)[],
  realOf: (self: Self) => object,
): void {
  for (const name of names) {
    Object.defineProperty(prototype, name, {
      value(this: Self, ...args: unknown[]) {
        const target = realOf(this);
        return (Reflect.get(target, name) as (...a: unknown[]) => unknown).apply(target, args);
      },
    });
  }
}
