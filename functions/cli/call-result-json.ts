/**
 * What `call --json` and `run --json` print: the SDK's call result, whose `headers` is a Fetch
 * `Headers` (JSON.stringify shows one as `{}`), with the headers as a plain object of their
 * lowercase names, as the Fetch API reads them.
 */
import type { CallResult } from '../../sdk/src/call.ts';

export function callResultJson(result: CallResult<unknown>): Omit<CallResult<unknown>, 'headers'> & {
  headers: Record<string, string>;
} {
  return { ...result, headers: Object.fromEntries(result.headers) };
}
