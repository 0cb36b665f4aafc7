import type { CredentialChecks } from '../edge/keyless-bodies.ts';
import type { AnyOperation } from '../edge/operations.ts';
import type { OperationId } from '../platform/routes.ts';
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
import { credentialChecks as scheduleRunChecks, operations as scheduleRuns } from './schedule-runs.ts';
import { operations as schedules } from './schedules.ts';
import { operations as secrets } from './secrets.ts';
import { operations as services } from './services.ts';
import { operations as tasks } from './tasks.ts';
import { operations as usage } from './usage.ts';
import { operations as workspaces } from './workspaces.ts';

/** Every module's operations, by operation id: what the local platform serves (local-server.ts). */
export const allOperations: Partial<Record<OperationId, AnyOperation>> = {
  ...health,
  ...openapi,
  ...apiKeys,
  ...tasks,
  ...workspaces,
  ...secrets,
  ...agents,
  ...agentAuthoring,
  ...publicDirectory,
  ...calls,
  ...schedules,
  ...scheduleRuns,
  ...services,
  ...billing,
  ...usage,
  ...edge,
  ...mcp,
} as Partial<Record<OperationId, AnyOperation>>;

/** The keyless routes' credential checks, before their bodies (keyless-bodies.ts). */
export const allCredentialChecks: CredentialChecks = { ...scheduleRunChecks };
