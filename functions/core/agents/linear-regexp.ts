import { RE2JS } from 're2js';

/**
 * The regular-expression engine for users' JSON Schemas (`pattern`, `patternProperties`,
 * `format: "regex"`). Node's RegExp backtracks, so a hostile pattern such as `^(a+)+$` can hold
 * the shared event loop for seconds and stall every other tenant. RE2 (re2js, a pure JS port)
 * matches in time linear in the input; it refuses backreferences and lookaround, which is why a
 * schema using them is refused at publish (the error names the pattern) rather than at call time.
 */

/** Thrown for a pattern RE2 cannot compile; its message is shown to the author. */
export class UnsupportedPatternError extends Error {}

/** RE2-compiles a pattern, or throws UnsupportedPatternError saying why. */
export function compileLinearPattern(pattern: string): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (err) {
    throw new UnsupportedPatternError(
      `pattern ${JSON.stringify(pattern)} is not supported (${(err as Error).message}); patterns run on a linear-time engine (RE2): backreferences and lookaround are not available`,
    );
  }
}

/**
 * ajv's `code.regExp` contract: (pattern, flags) returns an object with `test`; ajv caches
 * compiled patterns by the object's toString(), so it must be distinct per pattern. The `code`
 * property is only used by ajv's standalone code generation, which the platform does not use.
 * The `u` flag is ignored: RE2 always matches by code point.
 */
export const linearRegExp = Object.assign(
  (pattern: string, flags: string) => {
    const re = compileLinearPattern(pattern);
    return { test: (s: string) => re.test(s), toString: () => `/${pattern}/${flags}` };
  },
  { code: 'require("./linear-regexp").linearRegExp' },
);

/** ajv format check for `format: "regex"`: the string is a pattern this engine accepts. */
export function isLinearPattern(s: string): boolean {
  try {
    RE2JS.compile(s);
    return true;
  } catch {
    return false;
  }
}
