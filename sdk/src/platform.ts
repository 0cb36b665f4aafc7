import type { Client } from 'openapi-fetch';
import { unwrap } from './errors.ts';
import type { paths } from './generated/openapi.ts';

/** The platform itself: readiness and its OpenAPI document. */
export function platformResource(api: Client<paths>) {
  return {
    /** The readiness check: `{ status: 'ok' }`. */
    health: async () => unwrap(await api.GET('/health')),
    /** The OpenAPI 3.1 document the platform serves (these types are generated from it). */
    openapi: async () => unwrap(await api.GET('/openapi.json')),
  };
}
