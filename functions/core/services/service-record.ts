import * as z from 'zod';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond, type Item, type TransactOp } from '../../ports/store.ts';
import { defineEntity } from '../entity.ts';
import { REVISION_OP } from '../revision.ts';

const serviceState = z.enum(['provisioning', 'running', 'paused']);
const healthStatus = z.enum(['starting', 'healthy', 'unhealthy', 'stopped']);
export type ServiceState = z.output<typeof serviceState>;
export type HealthStatus = z.output<typeof healthStatus>;

const serviceFields = {
  id: z.string(),
  workspace_id: z.string(),
  name: z.string(),
  agent: z.string(),
  agent_version: z.string(),
  auto_update: z.boolean(),
  state: serviceState,
  /** Why it is paused: `crash_loop` (auto-paused) or null. */
  paused_reason: z.literal('crash_loop').nullable(),
  /** The crash-loop flag the spec shows. */
  crash_loop: z.boolean(),
  health_status: healthStatus,
  restart_count: z.number(),
  consecutive_restart_failures: z.number(),
  max_restart_failures: z.number(),
  /** Whether the half-way warning was sent for the current streak. */
  crash_warning_sent: z.boolean(),
  min_instances: z.number(),
  max_instances: z.number(),
  url: z.string().nullable(),
  command: z.string().nullable(),
  http: z.boolean(),
  env: z.record(z.string(), z.string()),
  /** Extra secret names given at deploy or patch (beyond the agent's required_secrets). */
  extra_secrets: z.array(z.string()),
  /** Every secret name injected: required_secrets merged with extra_secrets. */
  secrets: z.array(z.string()),
  alert_webhook_url: z.string().nullable(),
  last_error: z.string().nullable(),
  deployed_at: z.string(),
  last_restart_at: z.string().nullable(),
  created_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
};

export type Service = z.output<z.ZodObject<typeof serviceFields>>;

export interface StoredService {
  service: Service;
  rev: number;
  /** Local: the gateway port, kept so the URL survives restarts. */
  port: number | null;
  /**
   * When the platform last launched it (deploy, restart, a change that restarts it, a new
   * version, a resume), taken before the runner starts anything: a report of a task created
   * before it is an earlier launch's (ServiceExit.taskCreatedAt). Not part of the API's service.
   */
  launchedAt: string | null;
}

export const serviceKeys = {
  service: (id: string) => ({ pk: `SERVICE#${id}`, sk: 'SERVICE' }),
  ofWorkspace: (workspaceId: string) => `WS#${workspaceId}#SERVICES`,
  /** Uniqueness of a service name in its workspace. */
  name: (workspaceId: string, name: string) => ({ pk: `WS#${workspaceId}`, sk: `SERVICENAME#${name}` }),
  /** The account's count of services (the tier's limit). */
  counter: (accountId: string) => ({ pk: `ACCOUNT#${accountId}`, sk: 'SERVICES' }),
  /** Every service the local host must keep running after a restart of the platform. */
  active: 'SERVICES#ACTIVE',
};

/** The service record, with its revision (every writer conditions on it) and local gateway port. */
export const serviceEntity = defineEntity({
  name: 'service',
  keys: serviceKeys,
  schema: z.object({
    ...serviceFields,
    rev: z.number().default(0),
    port: z.number().nullable().default(null),
    launched_at: z.string().nullable().default(null),
  }),
  locate: (s) => ({
    ...serviceKeys.service(s.id),
    gsi1pk: serviceKeys.ofWorkspace(s.workspace_id),
    gsi1sk: `${s.created_at}#${s.id}`,
    ...(s.state !== 'paused' ? { gsi2pk: serviceKeys.active, gsi2sk: s.id } : {}),
  }),
});

export function serviceItem(
  s: Service,
  rev: number,
  port: number | null,
  launchedAt: string | null = null,
): Item {
  return serviceEntity.toItem({ ...s, rev, port, launched_at: launchedAt });
}

export function fromServiceItem(item: Item): StoredService {
  const { rev, port, launched_at, ...service } = serviceEntity.fromItem(item);
  return { service, rev, port, launchedAt: launched_at };
}

/** Whether a task created at `taskCreatedAt` predates the service's latest launch (StoredService.launchedAt). */
export function ofEarlierLaunch(stored: StoredService, taskCreatedAt: string | undefined): boolean {
  if (!taskCreatedAt || !stored.launchedAt) return false;
  const created = Date.parse(taskCreatedAt);
  return Number.isFinite(created) && created < Date.parse(stored.launchedAt);
}

export async function loadStoredService(deps: CoreDeps, id: string): Promise<StoredService | undefined> {
  const item = await deps.store.get(serviceKeys.service(id));
  return item ? fromServiceItem(item) : undefined;
}

/** The put of a new revision, conditioned on the one it was computed from. */
export function serviceWrite(
  stored: StoredService,
  next: Service,
  changes: { port?: number | null; launchedAt?: string } = {},
): TransactOp {
  return {
    name: REVISION_OP,
    put: serviceItem(
      next,
      stored.rev + 1,
      changes.port === undefined ? stored.port : changes.port,
      changes.launchedAt ?? stored.launchedAt,
    ),
    condition: cond.eq('rev', stored.rev),
  };
}
