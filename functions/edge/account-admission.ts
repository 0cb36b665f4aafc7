import { admitAccountRequest, chargeAnswerBytes } from '../core/usage/account-request-rate.ts';
import type { RequestScope } from './edge-context.ts';
import { responseParts } from './lazy-response.ts';

/*
 * The account's request rate at the edge (core/usage/account-request-rate.ts): every route a key
 * opens counts against it once the key is known and before the body is read, except the agent call,
 * which its own admission counts (daily quota and concurrent requests). The answer's bytes are
 * charged after it is made, beside the answer (waitUntil), so they refuse the account's next
 * requests and never delay this one's.
 */

/** Whether the matched route counts against its caller's request rate. */
function counted(scope: RequestScope): boolean {
  return scope.auth !== undefined && scope.route !== undefined && scope.route.id !== 'callAgent';
}

/** Counts the request against its account's rate; throws the 429 past it. */
export async function admitAccount(scope: RequestScope): Promise<void> {
  if (scope.auth && counted(scope)) await admitAccountRequest(scope.deps, scope.auth);
}

/** Charges the answer's bytes to its account, after the answer (a JSON answer: its body's bytes). */
export function chargeAnswer(scope: RequestScope, response: Response): void {
  const auth = scope.auth;
  if (!auth || !counted(scope)) return;
  const body = responseParts(response)?.body;
  if (!body) return;
  const bytes = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  scope.waitUntil(
    chargeAnswerBytes(scope.deps, auth, bytes).catch((err: unknown) => {
      // A lost charge lets one answer go unpaid; it must not fail the answer already sent.
      scope.deps.logger.warn('request rate charge failed', {
        request_id: scope.requestId,
        error: String(err),
      });
    }),
  );
}
