import type { Deps } from '../platform/deps.ts';
import type { OperationId } from '../platform/routes.ts';
import { PlatformError } from '../shared/errors.ts';

/*
 * How the edge bounds, on both deployments, the bodies of requests no API key vouches for (docs/decisions.md
 * "Reading bodies"): before a byte is read, the address's per-minute limit; a route that takes no
 * body drops at most IGNORED_KEYLESS_BODY_BYTES of one; a route whose credential is in its path
 * (a schedule's webhook) has it checked first (CredentialChecks); the rest (Stripe's webhook, whose signature covers
 * the body) are read at most KEYLESS_BODY_READS_PER_ADDRESS at once per address.
 */

/** The most of a body a keyless route that takes none reads and drops; more is 413. */
export const IGNORED_KEYLESS_BODY_BYTES = 16 * 1024;

/** Bodies read at once from one address on keyless routes with no credential to check first. */
export const KEYLESS_BODY_READS_PER_ADDRESS = 4;

/**
 * How a keyless route whose credential is in its path has it checked before its body is read: the
 * check throws the route's refusal. Each such route's module provides its own
 * (functions/http/schedule-runs.ts), so no other function carries that module's core.
 */
export type CredentialBeforeBody = (deps: Deps, params: Record<string, string>) => Promise<unknown>;

/** The credential checks of the routes a function serves, by operation. */
export type CredentialChecks = Partial<Record<OperationId, CredentialBeforeBody>>;

/** The 429 of a body over KEYLESS_BODY_READS_PER_ADDRESS. */
export function keylessReadsRefusal(): PlatformError {
  return new PlatformError(
    'RATE_LIMITED',
    `More than ${KEYLESS_BODY_READS_PER_ADDRESS} bodies at once from this address without an API key; retry in a second`,
    { suggested_wait_time: 1, limit: KEYLESS_BODY_READS_PER_ADDRESS, quota: 'keyless_bodies' },
  );
}
