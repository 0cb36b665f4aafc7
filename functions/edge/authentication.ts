import { authenticate } from '../core/api-keys/api-keys.ts';
import { addressLimited, countAddressRequest } from '../core/usage/address-rate-limit.ts';
import type { Deps } from '../platform/deps.ts';
import { PlatformError } from '../shared/errors.ts';
import type { RequestScope } from './edge-context.ts';

/*
 * Authentication of the routes an API key opens (route `auth: 'api-key'`), before a byte of the
 * body is read. A missing or wrong key counts against the request's address like any keyless
 * request (docs/http.md), so past the address's limit it is 429, not 401, and guessing keys is
 * bounded by that limit.
 */

/** Sets `scope.auth`, or throws the refusal with the request counted against its address. */
export async function authenticateKey(
  scope: RequestScope,
  authorization: string | undefined,
  acceptRunCredential: boolean,
): Promise<void> {
  const deps = scope.deps;
  try {
    scope.auth = await authenticate(deps, authorization, { acceptRunCredential });
  } catch (err) {
    if (!(err instanceof PlatformError)) throw err;
    const admission = await countAddressRequest(deps, scope.address);
    scope.addressAdmission = admission;
    throw admission.refused && err.code === 'UNAUTHORIZED'
      ? addressLimited(admission, deps.clock.now())
      : err;
  }
}

/** The caller a key vouches for, if it does; nothing is refused (a request no route takes). */
export async function tryAuthenticate(deps: Deps, authorization: string | undefined) {
  if (!authorization) return undefined;
  try {
    return await authenticate(deps, authorization, { acceptRunCredential: false });
  } catch {
    return undefined; // not a good key: the answer is the same, under the address's limit
  }
}
