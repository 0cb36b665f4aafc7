import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond, type Item, type TransactOp } from '../../ports/store.ts';

export type ServiceState = 'provisioning' | 'running' | 'paused';
export type HealthStatus = 'starting' | 'healthy' | 'unhealthy' | 'stopped';

export type Service = {
  id: string;
  workspace_id: string;
  name: string;
  agent: string;
  agent_version: string;
  auto_update: boolean;
  state: ServiceState;
  /** Why it is paused: `crash_loop` (auto-paused) or null. */
  paused_reason: 'crash_loop' | null;
  /** The crash-loop flag the spec shows. */
  crash_loop: boolean;
  health_status: HealthStatus;
  restart_count: number;
  consecutive_restart_failures: number;
  max_restart_failures: number;
  /** Whether the half-way warning was sent for the current streak. */
  crash_warning_sent: boolean;
  min_instances: number;
  max_instances: number;
  url: string | null;
  command: string | null;
  http: boolean;
  env: Record<string, string>;
  /** Extra secret names given at deploy or patch (beyond the agent's required_secrets). */
  extra_secrets: string[];
  /** Every secret name injected: required_secrets merged with extra_secrets. */
  secrets: string[];
  alert_webhook_url: string | null;
  last_error: string | null;
  deployed_at: string;
  last_restart_at: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
};

export interface StoredService {
  service: Service;
  rev: number;
  /** Local: the gateway port, kept so the URL survives restarts. */
  port: number | null;
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
  events: (id: string) => `SERVICE#${id}#EVENTS`,
  logs: (id: string) => `SERVICE#${id}#LOGS`,
};

export function serviceItem(s: Service, rev: number, port: number | null): Item {
  const active = s.state !== 'paused';
  return {
    ...serviceKeys.service(s.id),
    ...(s as unknown as Record<string, never>),
    rev,
    port,
    gsi1pk: serviceKeys.ofWorkspace(s.workspace_id),
    gsi1sk: `${s.created_at}#${s.id}`,
    ...(active ? { gsi2pk: serviceKeys.active, gsi2sk: s.id } : {}),
  };
}

export function fromServiceItem(item: Item): StoredService {
  const { pk: _p, sk: _s, gsi1pk: _a, gsi1sk: _b, gsi2pk: _c, gsi2sk: _d, rev, port, ...rest } = item;
  return {
    service: rest as unknown as Service,
    rev: typeof rev === 'number' ? rev : 0,
    port: typeof port === 'number' ? port : null,
  };
}

export async function loadStoredService(deps: CoreDeps, id: string): Promise<StoredService | undefined> {
  const item = await deps.store.get(serviceKeys.service(id));
  return item ? fromServiceItem(item) : undefined;
}

/** The put of a new revision, conditioned on the one it was computed from. */
export function serviceWrite(stored: StoredService, next: Service, port = stored.port): TransactOp {
  return { put: serviceItem(next, stored.rev + 1, port), condition: cond.eq('rev', stored.rev) };
}
