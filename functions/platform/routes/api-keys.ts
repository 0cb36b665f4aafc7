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
    description:
      'Every key of the caller’s account, with its name, prefix (to recognise it) and the agent it is marked for; the keys themselves are kept only as hashes and never shown again.',
    tag: 'API keys',
    success: { status: 200, schema: apiKeyListSchema, description: 'The keys' },
  }),
  createApiKey: route({
    method: 'POST',
    path: '/api-keys',
    module: 'api-keys',
    auth: 'api-key',
    summary: 'Create an API key; the key is shown once, in this response',
    description:
      'A new key for the caller’s account, named, and optionally marked as an agent’s (tasks created with it record that agent). The key is in this response only: store it now.',
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
    description:
      'Deletes one of the account’s keys, the one making the request included; 409 CONFLICT for the account’s last key (create another first).',
    tag: 'API keys',
    params: apiKeyIdParams,
    success: { status: 204, description: 'Deleted' },
  }),
} as const;
