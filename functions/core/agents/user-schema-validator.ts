import type { ValidateFunction } from 'ajv/dist/2020.js';

/*
 * The validator of a user's JSON Schema for a call (an agent's input or output schema, a custom
 * tool's input), with ajv and re2js (user-schema.ts, about 290 KB bundled) imported on the first
 * call that has a schema: a call route that never meets one never loads them, and the calls
 * Lambda's cold start does not read them (bench/lambda-init.ts, docs/performance.md). Publishing
 * checks schemas through user-schema.ts directly.
 */

let engine: Promise<typeof import('./user-schema.ts')> | undefined;

/** compileInputValidator of user-schema.ts (cached per schema there), loading it on first use. */
export async function userSchemaValidator(schema: Record<string, unknown>): Promise<ValidateFunction> {
  engine ??= import('./user-schema.ts');
  const { compileInputValidator } = await engine;
  return compileInputValidator(schema);
}
