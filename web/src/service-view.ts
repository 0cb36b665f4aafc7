import type { AgentHostClient } from './api-client.ts';

/**
 * A service as the API answers it. The API's types name only its core fields; the rest of the
 * record (docs/services.md) arrives as JSON values, read here with a check of each one's type.
 */
export type ServiceRecord = Awaited<ReturnType<AgentHostClient['services']['get']>>;

export function num(v: unknown): number | null {
  return typeof v === 'number' ? v : null;
}
export function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}
export function names(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((n): n is string => typeof n === 'string');
  // env is an object of name → value: its names only (values are not shown).
  if (v && typeof v === 'object') return Object.keys(v);
  return [];
}

export interface ServiceEvent {
  event_id: string;
  type: string;
  message: string;
  at: string;
}
export function eventsOf(s: ServiceRecord): ServiceEvent[] {
  if (!Array.isArray(s.events)) return [];
  return s.events.flatMap((e) => {
    if (!e || typeof e !== 'object' || Array.isArray(e)) return [];
    const { event_id, type, message, at } = e as Record<string, unknown>;
    return typeof type === 'string' && typeof at === 'string'
      ? [{ event_id: String(event_id), type, message: String(message ?? ''), at }]
      : [];
  });
}

/** Healthy is good, stopped is neutral, anything else needs a look. */
export function healthTone(health: string): '' | 'ok' | 'bad' {
  return health === 'healthy' ? 'ok' : health === 'stopped' ? '' : 'bad';
}
