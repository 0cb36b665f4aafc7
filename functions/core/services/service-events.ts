import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import type { CoreDeps } from '../../ports/core-deps.ts';
import type { Item } from '../../ports/store.ts';
import { defineEntity } from '../entity.ts';
import { sortSuffix } from '../sort-suffix.ts';

/**
 * A service's timeline (spec: "event kinds: not shown"; ours, docs/services.md): deployed,
 * starting, ready, crashed, restarting, crash_warning, crash_loop_paused, restarted, config_updated,
 * version_updated, port_conflict, alert_failed, deleted.
 */
const serviceEventType = z.enum([
  'deployed',
  'starting',
  'ready',
  'crashed',
  'crash_warning',
  'crash_loop_paused',
  'restarted',
  'config_updated',
  'version_updated',
  'stopped',
]);

export type ServiceEventType = z.output<typeof serviceEventType>;

const serviceEventSchema = z.object({
  event_id: z.string(),
  type: serviceEventType,
  message: z.string(),
  at: z.string(),
});

export type ServiceEvent = z.output<typeof serviceEventSchema>;

/**
 * Timeline entries and log lines are kept this long; 30 days for lines too, as the services' log
 * group keeps them on AWS (lib/constructs/service-hosting.ts), so both deployments answer alike.
 */
export const SERVICE_EVENTS_DAYS = 30;
export const SERVICE_LOG_DAYS = 30;

export const serviceEventKeys = {
  /** A service's timeline, by time. */
  ofService: (serviceId: string) => `SERVICE#${serviceId}#EVENTS`,
  /** A service's log lines, by time. */
  logs: (serviceId: string) => `SERVICE#${serviceId}#LOGS`,
};

/** One timeline entry; its service's id is in its partition. */
export const serviceEventEntity = defineEntity({
  name: 'service event',
  keys: serviceEventKeys,
  schema: serviceEventSchema,
  locate: (event, serviceId: string) => ({
    pk: serviceEventKeys.ofService(serviceId),
    sk: `EVENT#${event.at}#${sortSuffix()}#${event.event_id}`,
    ttl: Math.floor(Date.parse(event.at) / 1000) + SERVICE_EVENTS_DAYS * 86_400,
  }),
});

export function serviceEventItem(
  deps: CoreDeps,
  serviceId: string,
  type: ServiceEventType,
  message: string,
): Item {
  const event: ServiceEvent = { event_id: randomUUID(), type, message, at: deps.clock.now().toISOString() };
  return serviceEventEntity.toItem(event, serviceId);
}

export function serviceEventFromItem(item: Item): ServiceEvent {
  return serviceEventEntity.fromItem(item);
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
        pk: serviceEventKeys.logs(serviceId),
        sk: `LOG#${l.at}#${sortSuffix()}`,
        ...l,
        ttl: Math.floor(Date.parse(l.at) / 1000) + SERVICE_LOG_DAYS * 86_400,
      } as Item,
    }));
    await deps.store.transactWrite(batch);
  }
}
