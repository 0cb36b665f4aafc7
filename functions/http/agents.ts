import { agentLogs, deleteAgent, deleteCheck, getAgent, listAgents } from '../core/agents/agents.ts';
import { readCallTrace } from '../core/traces/trace-read.ts';
import type { Operations } from '../edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { createModuleHandler } from './module-handler.ts';

export const operations: Operations<'agents'> = {
  listAgents: ({ deps, auth, query }) => listAgents(deps, auth, query),
  getAgent: ({ deps, auth, params }) => getAgent(deps, auth, params.id),
  agentLogs: ({ deps, auth, params, query }) => agentLogs(deps, auth, params.id, query),
  callTrace: ({ deps, auth, params }) => readCallTrace(deps, auth, params.id, params.request_id),
  deleteCheck: ({ deps, auth, params }) => deleteCheck(deps, auth, params.id),
  deleteAgent: async ({ deps, auth, params, query }) => {
    await deleteAgent(deps, auth, params.id, {
      allVersions: query.mode === 'all_versions',
      force: query.force ?? false,
    });
    return undefined;
  },
};

export const handler = createModuleHandler('agents', operations, lambdaDeps);
