import { agentRoutes } from './routes/agents.ts';
import { apiKeyRoutes } from './routes/api-keys.ts';
import { billingRoutes } from './routes/billing.ts';
import { callRoutes } from './routes/calls.ts';
import { mcpRoutes } from './routes/mcp.ts';
import { platformRoutes } from './routes/platform.ts';
import { publicRoutes } from './routes/public.ts';
import type { RouteDef } from './routes/route-def.ts';
import { runRoutes } from './routes/runs.ts';
import { scheduleRoutes } from './routes/schedules.ts';
import { secretRoutes } from './routes/secrets.ts';
import { serviceRoutes } from './routes/services.ts';
import { taskRoutes } from './routes/tasks.ts';
import { usageRoutes } from './routes/usage.ts';
import { workspaceRoutes } from './routes/workspaces.ts';

export { type HttpMethod, MODULES, type ResourceModule, type RouteDef } from './routes/route-def.ts';

/**
 * The route table: the single source for the local server's dispatch, the CDK API resources
 * (one Lambda per module) and /openapi.json. Each resource's routes live in functions/platform/
 * routes/<resource>.ts; this file assembles them, and the order of the spreads is the table's
 * order. Adding an endpoint is one entry in its resource's file plus its operation in
 * functions/http/<module>.ts.
 */

export const routes = {
  ...platformRoutes,
  ...apiKeyRoutes,
  ...taskRoutes,
  ...workspaceRoutes,
  ...secretRoutes,
  ...agentRoutes,
  ...publicRoutes,
  ...callRoutes,
  ...runRoutes,
  ...mcpRoutes,
  ...usageRoutes,
  ...scheduleRoutes,
  ...serviceRoutes,
  ...billingRoutes,
} as const;

export type Routes = typeof routes;
export type OperationId = keyof Routes;

export const routeList: [OperationId, RouteDef][] = Object.entries(routes) as [OperationId, RouteDef][];
