import type { Deps } from '../platform/deps.ts';
import { type ApiHandler, createModuleHandler } from '../platform/http-handler.ts';
import type { ResourceModule } from '../platform/routes.ts';
import { operations as agentAuthoring } from './agent-authoring.ts';
import { operations as agents } from './agents.ts';
import { operations as apiKeys } from './api-keys.ts';
import { operations as billing } from './billing.ts';
import { operations as calls } from './calls.ts';
import { operations as edge } from './edge.ts';
import { operations as health } from './health.ts';
import { operations as mcp } from './mcp.ts';
import { operations as openapi } from './openapi.ts';
import { operations as publicDirectory } from './public.ts';
import { operations as scheduleRuns } from './schedule-runs.ts';
import { operations as schedules } from './schedules.ts';
import { operations as secrets } from './secrets.ts';
import { operations as services } from './services.ts';
import { operations as tasks } from './tasks.ts';
import { operations as usage } from './usage.ts';
import { operations as workspaces } from './workspaces.ts';

/** Every module's handler over one dependency set: what the local server dispatches to. */
export function createAllHandlers(deps: Deps): Record<ResourceModule, ApiHandler> {
  const get = async () => deps;
  return {
    health: createModuleHandler('health', health, get),
    openapi: createModuleHandler('openapi', openapi, get),
    'api-keys': createModuleHandler('api-keys', apiKeys, get),
    tasks: createModuleHandler('tasks', tasks, get),
    workspaces: createModuleHandler('workspaces', workspaces, get),
    secrets: createModuleHandler('secrets', secrets, get),
    agents: createModuleHandler('agents', agents, get),
    'agent-authoring': createModuleHandler('agent-authoring', agentAuthoring, get),
    public: createModuleHandler('public', publicDirectory, get),
    calls: createModuleHandler('calls', calls, get),
    schedules: createModuleHandler('schedules', schedules, get),
    'schedule-runs': createModuleHandler('schedule-runs', scheduleRuns, get),
    services: createModuleHandler('services', services, get),
    billing: createModuleHandler('billing', billing, get),
    usage: createModuleHandler('usage', usage, get),
    edge: createModuleHandler('edge', edge, get),
    mcp: createModuleHandler('mcp', mcp, get),
  };
}
