import {
  downloadPublicAgent,
  listPublicAgents,
  publicAgentDetails,
} from '../core/agents/public-directory.ts';
import type { Operations } from '../edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { createModuleHandler } from './module-handler.ts';

export const operations: Operations<'public'> = {
  listPublicAgents: ({ deps, query }) => listPublicAgents(deps, query),
  publicAgentDetails: ({ deps, params }) =>
    publicAgentDetails(deps, params.org, params.agent, params.version),
  downloadPublicAgent: ({ deps, params }) =>
    downloadPublicAgent(deps, params.org, params.agent, params.version),
};

export const handler = createModuleHandler('public', operations, lambdaDeps);
