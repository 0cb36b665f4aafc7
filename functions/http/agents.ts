import {
  agentLogs,
  deleteAgent,
  deleteCheck,
  forkAgent,
  getAgent,
  listAgents,
  patchAgent,
  publishAgent,
  uploadBundle,
} from '../core/agents/agents.ts';
import { createModuleHandler, type Operations } from '../platform/http-handler.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';

export const operations: Operations<'agents'> = {
  publishAgent: ({ deps, auth, query, body }) =>
    publishAgent(deps, auth, body, {
      workspaceId: query.workspace_id,
      allowNoSecrets: query.allow_no_secrets ?? false,
    }),
  listAgents: ({ deps, auth, query }) => listAgents(deps, auth, query),
  getAgent: ({ deps, auth, params }) => getAgent(deps, auth, params.id),
  patchAgent: ({ deps, auth, params, body }) => patchAgent(deps, auth, params.id, body),
  uploadBundle: ({ deps, auth, params, body }) => uploadBundle(deps, auth, params.id, body),
  agentLogs: ({ deps, auth, params, query }) => agentLogs(deps, auth, params.id, query.limit),
  deleteCheck: ({ deps, auth, params }) => deleteCheck(deps, auth, params.id),
  deleteAgent: async ({ deps, auth, params, query }) => {
    await deleteAgent(deps, auth, params.id, {
      allVersions: query.mode === 'all_versions',
      force: query.force ?? false,
    });
    return undefined;
  },
  forkAgent: ({ deps, auth, params, body }) => forkAgent(deps, auth, params.id, body),
};

export const handler = createModuleHandler('agents', operations, lambdaDeps);
