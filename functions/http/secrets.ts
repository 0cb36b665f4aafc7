import { deleteSecret, listSecrets, putSecret } from '../core/secrets/secrets.ts';
import type { Operations } from '../edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { createModuleHandler } from './module-handler.ts';

export const operations: Operations<'secrets'> = {
  listSecrets: async ({ deps, auth, params }) => ({
    secrets: await listSecrets(deps, auth, params.workspace_id),
  }),
  putSecret: ({ deps, auth, params, body }) => putSecret(deps, auth, params.workspace_id, body),
  deleteSecret: async ({ deps, auth, params }) => {
    await deleteSecret(deps, auth, params.workspace_id, params.name);
    return undefined;
  },
};

export const handler = createModuleHandler('secrets', operations, lambdaDeps);
