import {
  downloadPublicAgent,
  listPublicAgents,
  publicAgentDetails,
} from '../core/agents/public-directory.ts';
import { createModuleHandler } from '../platform/edge/module-handler.ts';
import type { Operations } from '../platform/edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';

export const operations: Operations<'public'> = {
  listPublicAgents: ({ deps, query }) => listPublicAgents(deps, query),
  publicAgentDetails: ({ deps, params }) =>
    publicAgentDetails(deps, params.org, params.agent, params.version),
  downloadPublicAgent: ({ deps, params }) =>
    downloadPublicAgent(deps, params.org, params.agent, params.version),
};

export const handler = createModuleHandler('public', operations, lambdaDeps);
