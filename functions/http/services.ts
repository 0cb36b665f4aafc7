import { updateServiceVersion } from '../core/services/service-versions.ts';
import {
  deleteService,
  deployService,
  getService,
  listServices,
  patchService,
  restartService,
  serviceLogs,
} from '../core/services/services.ts';
import type { Operations } from '../edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { createModuleHandler } from './module-handler.ts';

export const operations: Operations<'services'> = {
  listServices: ({ deps, auth, params, query }) => listServices(deps, auth, params.workspace_id, query),
  deployService: ({ deps, auth, params, body }) => deployService(deps, auth, params.workspace_id, body),
  getService: ({ deps, auth, params }) => getService(deps, auth, params.workspace_id, params.service_id),
  patchService: ({ deps, auth, params, body }) =>
    patchService(deps, auth, params.workspace_id, params.service_id, body),
  restartService: ({ deps, auth, params }) =>
    restartService(deps, auth, params.workspace_id, params.service_id),
  updateService: ({ deps, auth, params, body }) =>
    updateServiceVersion(deps, auth, params.workspace_id, params.service_id, body),
  deleteService: async ({ deps, auth, params }) => {
    await deleteService(deps, auth, params.workspace_id, params.service_id);
    return undefined;
  },
  serviceLogs: ({ deps, auth, params, query }) =>
    serviceLogs(deps, auth, params.workspace_id, params.service_id, query),
};

export const handler = createModuleHandler('services', operations, lambdaDeps);
