/**
 * The service record as the CLI reads it (docs/services.md, "A service record"), and how a service
 * is addressed: by its id or by its name, which is unique in its workspace. Names are looked up in
 * the workspace's list, since the API addresses services by id only.
 */
import type { Client } from './cli-context.ts';
import { CliError, EXIT } from './cli-errors.ts';

export interface ServiceRecord {
  id: string;
  name: string;
  agent: string;
  agent_version: string;
  auto_update: boolean;
  state: 'provisioning' | 'running' | 'paused';
  paused_reason: string | null;
  crash_loop: boolean;
  health_status: string;
  restart_count: number;
  consecutive_restart_failures: number;
  max_restart_failures: number;
  min_instances: number;
  max_instances: number;
  url: string | null;
  command: string | null;
  http: boolean;
  env: Record<string, string>;
  extra_secrets: string[];
  secrets: string[];
  alert_webhook_url: string | null;
  last_error: string | null;
  deployed_at: string;
  last_restart_at: string | null;
  created_at: string;
  updated_at: string;
  events?: { type: string; message: string; at: string }[];
}

/** The SDK types only the schema's core fields; the rest are documented extras. */
export const asService = (s: unknown) => s as ServiceRecord;

/** The service named `ref` (an id or a name) in workspace `ws`, or exit 5 with the fix. */
export async function findService(client: Client, ws: string, ref: string): Promise<ServiceRecord> {
  let byName: ServiceRecord | undefined;
  for await (const s of client.services.iterate(ws, 200)) {
    if (s.id === ref) return asService(s);
    if (s.name === ref) byName = asService(s);
  }
  if (byName) return byName;
  throw new CliError(
    `no service ${ref} in workspace ${ws}`,
    EXIT.notFound,
    'list them with `agenthost services list` (or choose the workspace with -w)',
  );
}
