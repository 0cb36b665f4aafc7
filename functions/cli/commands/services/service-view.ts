/**
 * What the `agenthost services` commands share: the flags of the commands that (re)start the app,
 * a service's table columns and record, and the wait after a deploy, restart or change.
 */
import { type Command, Option } from 'commander';
import type { CliContext, Client } from '../../cli-context.ts';
import { printRecord } from '../../cli-output.ts';
import { intArg } from '../../option-parsers.ts';
import type { ServicePatchFlags } from '../../service-patch.ts';
import type { ServiceRecord } from '../../service-record.ts';
import { DEFAULT_WAIT_SECONDS, waitUntilRunning } from '../../service-wait.ts';
import { escapeControls } from '../../terminal-text.ts';

export interface WaitFlags {
  /** false with --no-wait. */
  wait: boolean;
  waitTimeout: number;
}

export interface DeployFlags extends WaitFlags {
  name?: string;
  command?: string;
  env?: Record<string, string>;
  secret?: string[];
  minInstances?: number;
  maxInstances?: number;
  autoUpdate?: boolean;
  /** false with --no-http. */
  http: boolean;
  alertUrl?: string;
  maxRestartFailures?: number;
}

export interface UpdateFlags extends WaitFlags, ServicePatchFlags {
  latest?: boolean;
  pin?: string;
}

export const serviceColumns = [
  { header: 'NAME', value: (s: ServiceRecord) => s.name },
  { header: 'AGENT', value: (s: ServiceRecord) => `${s.agent}@${s.agent_version}` },
  { header: 'STATE', value: (s: ServiceRecord) => s.state },
  { header: 'HEALTH', value: (s: ServiceRecord) => s.health_status },
  { header: 'URL', value: (s: ServiceRecord) => s.url },
  { header: 'ID', value: (s: ServiceRecord) => s.id },
];

export function showService(ctx: CliContext, s: ServiceRecord): void {
  const { events, ...record } = s;
  printRecord(ctx, s, [
    ['name', record.name],
    ['id', record.id],
    ['agent', `${record.agent}@${record.agent_version}`],
    ['auto update', record.auto_update],
    ['state', `${record.state}${record.paused_reason ? ` (${record.paused_reason})` : ''}`],
    ['health', record.health_status],
    ['url', record.url],
    ['command', record.command],
    ['http', record.http],
    ['env', Object.keys(record.env ?? {}).length ? record.env : null],
    ['secrets', record.secrets?.join(', ') || null],
    ['instances', `${record.min_instances}-${record.max_instances}`],
    ['restarts', record.restart_count],
    ['failed starts', `${record.consecutive_restart_failures} of ${record.max_restart_failures}`],
    ['alert url', record.alert_webhook_url],
    ['last error', record.last_error],
    ['deployed', record.deployed_at],
    ['last restart', record.last_restart_at],
  ]);
  if (!ctx.json && events?.length) {
    ctx.out('\nrecent events (newest first):');
    for (const e of events.slice(0, 10))
      ctx.out(`  ${e.at}  ${e.type.padEnd(17)} ${escapeControls(e.message)}`);
  }
}

/** --wait-timeout and --no-wait, for the commands that (re)start the app. */
export function waitOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--wait-timeout <seconds>', 'how long to wait for the app to run, 1-3600')
        .argParser(intArg(1, 3600))
        .default(DEFAULT_WAIT_SECONDS),
    )
    .option('--no-wait', 'return at once, without waiting for the app to run');
}

/**
 * After a deploy, restart or change: waits for the app (unless --no-wait) while it starts. A change
 * to a paused service is stored for its next restart (`wasPaused`); any other pause is a failure.
 */
export async function settle(
  ctx: CliContext,
  client: Client,
  ws: string,
  s: ServiceRecord,
  flags: WaitFlags,
  wasPaused = false,
): Promise<ServiceRecord> {
  if (wasPaused && s.state === 'paused') {
    ctx.note(
      `${s.name} is paused: the change applies when it restarts (agenthost services restart ${s.name})`,
    );
    return s;
  }
  if (!flags.wait || s.state === 'running') return s;
  return waitUntilRunning(ctx, client, ws, s, flags.waitTimeout);
}
