/*
 * Public directory routes: public agents, readable without an API key.
 * Spread into the route table in functions/platform/routes.ts, whose order they keep.
 */

import {
  publicAgentDetailsSchema,
  publicAgentListSchema,
  publicAgentParams,
  publicDownloadSchema,
  publicListQuery,
} from '../../core/agents/agent-schemas.ts';
import { route } from './route-def.ts';

export const publicRoutes = {
  listPublicAgents: route({
    method: 'GET',
    path: '/public/agents',
    module: 'public',
    auth: 'none',
    summary: 'The public agent directory',
    tag: 'Public',
    query: publicListQuery,
    success: {
      status: 200,
      schema: publicAgentListSchema,
      description: 'Public agents (newest live version of each)',
    },
  }),
  publicAgentDetails: route({
    method: 'GET',
    path: '/public/agents/{org}/{agent}/{version}',
    module: 'public',
    auth: 'none',
    summary: 'A public agent version; prompt, manifest and skill files only for source-available agents',
    tag: 'Public',
    params: publicAgentParams,
    success: { status: 200, schema: publicAgentDetailsSchema, description: 'Details' },
  }),
  downloadPublicAgent: route({
    method: 'GET',
    path: '/public/agents/{org}/{agent}/{version}/download',
    module: 'public',
    auth: 'none',
    summary: 'Everything needed to run a source-available agent locally',
    tag: 'Public',
    params: publicAgentParams,
    errors: ['DOWNLOAD_DISABLED', 'PAID_AGENT_SERVER_ONLY'],
    success: {
      status: 200,
      schema: publicDownloadSchema,
      description: 'Agent data and a short-lived bundle URL',
    },
  }),
} as const;
