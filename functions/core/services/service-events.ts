import { randomUUID } from 'node:crypto';
import type { CoreDeps } from '../../ports/core-deps.ts';
import type { Item } from '../../ports/store.ts';
import { sortSuffix } from '../sort-suffix.ts';
import { serviceKeys } from './service-record.ts';

/**
 * A service's timeline (spec: "event kinds: not shown"; ours, docs/services.md): deployed,
 * starting, ready, crashed, restarting, crash_warning, crash_loop_paused, restarted, config_updated,
 * version_updated, port_conflict, alert_failed, deleted.
 */
export type ServiceEventType =
  | 'deployed'
  | 'starting'
  | 'ready'
  | 'crashed'
  | 'crash_warning'
  | 'crash_loop_paused'
  | 'restarted'
  | 'config_updated'
  | 'version_updated'
  | 'stopped';

export type ServiceEvent = {
  event_id: string;
  type: ServiceEventType;
  message: string;
  at: string;
};

/** Timeline entries and log lines are kept this long. */
export const SERVICE_EVENTS_DAYS = 30;
export const SERVICE_LOG_DAYS = 7;

export function serviceEventItem(
  deps: CoreDeps,
  serviceId: string,
  type: ServiceEventType,
  message: string,
): Item {
  const at = deps.clock.now();
  const event: ServiceEvent = { event_id: randomUUID(), type, message, at: at.toISOString() };
  return {
    pk: serviceKeys.events(serviceId),
    sk: `EVENT#${event.at}#${sortSuffix()}#${event.event_id}`,
    ...(event as unknown as Record<string, never>),
    ttl: Math.floor(at.getTime() / 1000) + SERVICE_EVENTS_DAYS * 86_400,
  };
}

export function serviceEventFromItem(item: Item): ServiceEvent {
  return {
    event_id: String(item.event_id),
    type: item.type as ServiceEventType,
    message: String(item.message),
    at: String(item.at),
  };
}

export interface ServiceLogLine {
  at: string;
  level: 'info' | 'warn' | 'error';
  message: string;
}

/** Writes log lines (already redacted by the runner) in transactions of up to 100. */
export async function writeServiceLogs(
  deps: CoreDeps,
  serviceId: string,
  lines: ServiceLogLine[],
): Promise<void> {
  for (let i = 0; i < lines.length; i += 100) {
    const batch = lines.slice(i, i + 100).map((l) => ({
      put: {
        pk: serviceKeys.logs(serviceId),
        sk: `LOG#${l.at}#${sortSuffix()}`,
        ...l,
        ttl: Math.floor(Date.parse(l.at) / 1000) + SERVICE_LOG_DAYS * 86_400,
      } as Item,
    }));
    await deps.store.transactWrite(batch);
  }
}
