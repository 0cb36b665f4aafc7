import { addressLimited, countAddressRequest } from '../core/usage/address-rate-limit.ts';
import type { PlatformError } from '../shared/errors.ts';
import type { RequestScope } from './edge-context.ts';
import {
  type CredentialChecks,
  KEYLESS_BODY_READS_PER_ADDRESS,
  keylessReadsRefusal,
} from './keyless-bodies.ts';
import { PerAddressCount } from './per-address-count.ts';

/*
 * The rate limit of requests no API key vouches for (docs/decisions.md, "Reading bodies"): each
 * counts against its address's per-minute limit before anything else is done for it; a route
 * whose credential is in its path (a schedule's webhook) has it checked before the body is read;
 * the other keyless routes that take a body (Stripe's webhook, whose signature covers the body)
 * read at most KEYLESS_BODY_READS_PER_ADDRESS bodies at once per address.
 */

/** Counts the request against its address (once), and throws the 429 past the address's limit. */
export async function admitAddress(scope: RequestScope): Promise<void> {
  scope.addressAdmission ??= await countAddressRequest(scope.deps, scope.address);
  if (scope.addressAdmission.refused) throw addressLimited(scope.addressAdmission, scope.deps.clock.now());
}

/** Counts the request against its address, then throws `refusal` (a refusal before any other check). */
export async function refuseCounted(scope: RequestScope, refusal: PlatformError): Promise<never> {
  scope.addressAdmission ??= await countAddressRequest(scope.deps, scope.address);
  throw refusal;
}

/**
 * Counts a request nothing counted yet (one that failed before its caller was known) against its
 * address, so its answer still shows a rate limit (spec "Limits": on every response). Best effort:
 * a failed count leaves the answer without the headers, never changes it.
 */
export async function countIfUncounted(scope: RequestScope): Promise<void> {
  if (!scope.deps || scope.auth || scope.addressAdmission) return;
  try {
    scope.addressAdmission = await countAddressRequest(scope.deps, scope.address);
  } catch {
    // the answer goes out without rate-limit headers
  }
}

/** Bodies being read per address on keyless routes with no credential checked first. */
export class KeylessReads {
  private readonly reads = new PerAddressCount(KEYLESS_BODY_READS_PER_ADDRESS);
  private readonly checks: CredentialChecks;

  constructor(checks: CredentialChecks) {
    this.checks = checks;
  }

  /**
   * Admits a keyless request to a route: the address's count, the credential in its path, and, for
   * a route that takes a body with no credential, one of the address's reads. Returns the release
   * of that read (call it once the body is read), if one was taken.
   */
  async admit(scope: RequestScope, params: Record<string, string>, takesBody: boolean) {
    await admitAddress(scope);
    const route = scope.route;
    if (!route) return undefined;
    const check = this.checks[route.id];
    if (check) {
      await check(scope.deps, params);
      return undefined;
    }
    if (!takesBody) return undefined;
    const release = this.reads.take(scope.address);
    if (!release) throw keylessReadsRefusal();
    return release;
  }
}
