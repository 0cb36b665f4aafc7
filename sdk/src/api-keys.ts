import type { Client } from 'openapi-fetch';
import { unwrap } from './errors.ts';
import type { paths } from './generated/openapi.ts';

type ApiKeyCreateBody = NonNullable<paths['/api-keys']['post']['requestBody']>['content']['application/json'];

/** The account's API keys: a new key's secret is in the create answer only, once. */
export function apiKeysResource(api: Client<paths>) {
  return {
    list: async () => unwrap(await api.GET('/api-keys')),
    create: async (body: ApiKeyCreateBody) => unwrap(await api.POST('/api-keys', { body })),
    delete: async (id: string) => unwrap(await api.DELETE('/api-keys/{id}', { params: { path: { id } } })),
  };
}
