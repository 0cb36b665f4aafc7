/*
 * API key routes: list, create and delete the account's keys.
 * Spread into the route table in functions/platform/routes.ts, whose order they keep.
 */

import {
  apiKeyCreateBody,
  apiKeyCreatedSchema,
  apiKeyIdParams,
  apiKeyListSchema,
} from '../../core/api-keys/api-key-schemas.ts';
import { route } from './route-def.ts';

export const apiKeyRoutes = {
  listApiKeys: route({
    method: 'GET',
    path: '/api-keys',
    module: 'api-keys',
    auth: 'api-key',
    summary: 'List the account’s API keys (never the keys themselves)',
    tag: 'API keys',
    success: { status: 200, schema: apiKeyListSchema, description: 'The keys' },
  }),
  createApiKey: route({
    method: 'POST',
    path: '/api-keys',
    module: 'api-keys',
    auth: 'api-key',
    summary: 'Create an API key; the key is shown once, in this response',
    tag: 'API keys',
    body: apiKeyCreateBody,
    errors: ['CONFLICT'],
    success: { status: 201, schema: apiKeyCreatedSchema, description: 'Created' },
  }),
  deleteApiKey: route({
    method: 'DELETE',
    path: '/api-keys/{id}',
    module: 'api-keys',
    auth: 'api-key',
    summary: 'Delete an API key; it is refused from the next request on',
    tag: 'API keys',
    params: apiKeyIdParams,
    success: { status: 204, description: 'Deleted' },
  }),
} as const;
