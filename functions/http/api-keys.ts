import { createApiKey, deleteApiKey, listApiKeys } from '../core/api-keys/api-keys.ts';
import { rotateWebhookSecret } from '../core/runs/webhook-secret.ts';
import type { Operations } from '../edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { createModuleHandler } from './module-handler.ts';

export const operations: Operations<'api-keys'> = {
  listApiKeys: async ({ deps, auth }) => ({ api_keys: await listApiKeys(deps, auth.accountId) }),
  createApiKey: ({ deps, auth, body }) => createApiKey(deps, auth, body),
  deleteApiKey: async ({ deps, auth, params }) => {
    await deleteApiKey(deps, auth.accountId, params.id);
    return undefined;
  },
  rotateWebhookSecret: ({ deps, auth }) => rotateWebhookSecret(deps, auth.accountId),
};

export const handler = createModuleHandler('api-keys', operations, lambdaDeps);
