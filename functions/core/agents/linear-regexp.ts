import { RE2JS } from 're2js';

/**
 * The regular-expression engine for users' JSON Schemas (`pattern`, `patternProperties`,
 * `propertyNames.pattern`), handed to ajv as `code.regExp`. JavaScript's RegExp backtracks: a
 * published `pattern` such as `^(a+)+$` takes seconds on 30 characters and blocks the event loop
 * for every tenant. RE2 (here its pure-JS port) matches in time linear in the input, and refuses at
 * compile time what it cannot do in linear time (backreferences, lookaround), so such a schema is
 * refused at publish with a 400 instead of freezing a call later.
 *
 * ajv's contract (ajv `RegExpEngine`): called with the pattern and ajv's flags ('u' or ''), returns
 * an object with `test`; `code` is how generated code would require it (standalone code only).
 * RE2 reads JavaScript strings by code point, so the `u` flag needs no counterpart.
 */
export function linearRegExp(
  pattern: string,
  _flags: string,
): { test: (s: string) => boolean; toString: () => string } {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (err) {
    throw new Error(
      `pattern ${JSON.stringify(pattern)} is not supported (${(err as Error).message}): patterns use RE2 syntax, matched in linear time, without backreferences or lookaround`,
    );
  }
  return {
    test: (s: string) => compiled.test(s),
    // ajv keys its compiled patterns by this string: it must differ between patterns.
    toString: () => `/${pattern}/re2`,
  };
}
linearRegExp.code = 'require("re2js").RE2JS.compile';
