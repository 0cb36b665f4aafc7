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
    description:
      'The directory of public agents across all workspaces, each at its newest version that still answers calls; no API key (the per-address limit of keyless requests applies: docs/http.md).',
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
    description:
      'One public agent version as the directory shows it; its prompt, manifest and skill files only when the agent is source-available. No API key.',
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
    description:
      'For a source-available agent: its data and a short-lived URL of its code bundle, to run it locally. 403 DOWNLOAD_DISABLED for a server-only agent, PAID_AGENT_SERVER_ONLY for a paid one. No API key.',
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
