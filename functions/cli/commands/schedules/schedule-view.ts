/**
 * What the `agenthost schedules` commands share: a schedule's types, its table columns and record,
 * and the failure-streak flags create and update both take.
 */
import { type Command, Option } from 'commander';
import type { JsonBody } from '../../../../sdk/src/operation-types.ts';
import type { CliContext, Client } from '../../cli-context.ts';
import { type Column, printRecord } from '../../cli-output.ts';
import type { InputFlags } from '../../input-option.ts';
import { intArg } from '../../option-parsers.ts';

export type Schedule = Awaited<ReturnType<Client['schedules']['list']>>['schedules'][number];
export type ScheduleCreate = Parameters<Client['schedules']['create']>[1];
export type ScheduleUpdate = JsonBody<'updateSchedule'>;
export type JsonObject = NonNullable<ScheduleUpdate['input_data']>;
export type Provider = 'anthropic' | 'openai' | 'google' | 'ollama';

export const PROVIDERS: Provider[] = ['anthropic', 'openai', 'google', 'ollama'];

export interface CreateFlags extends InputFlags {
  cron?: string;
  webhook?: boolean;
  timezone?: string;
  provider?: Provider;
  disabled?: boolean;
  autoUpdate?: boolean;
  alertUrl?: string;
  alertAfter?: number;
  disableAfter?: number;
}

export interface UpdateFlags extends InputFlags {
  cron?: string;
  timezone?: string;
  /** a provider, or false with --no-provider. */
  provider?: Provider | false;
  pin?: string;
  autoUpdate?: boolean;
  /** a URL, or false with --no-alert-url. */
  alertUrl?: string | false;
  alertAfter?: number;
  disableAfter?: number;
}

const when = (s: Schedule) => (s.type === 'cron' ? `${s.cron_expression} ${s.timezone}` : 'webhook');
const enabledText = (s: Schedule) => (s.enabled ? 'yes' : s.auto_disabled ? 'no (auto-disabled)' : 'no');

export const scheduleColumns: Column<Schedule>[] = [
  { header: 'ID', value: (s) => s.id },
  { header: 'AGENT', value: (s) => `${s.agent}@${s.agent_version}` },
  { header: 'WHEN', value: when },
  { header: 'ENABLED', value: enabledText },
  { header: 'NEXT RUN', value: (s) => s.next_run_at },
  { header: 'LAST', value: (s) => s.last_status },
];

export function showSchedule(ctx: CliContext, s: Schedule): void {
  printRecord(ctx, s, [
    ['id', s.id],
    ['agent', `${s.agent}@${s.agent_version}${s.pinned ? ' (pinned)' : ''}`],
    ['auto update', s.auto_update],
    ['type', s.type],
    ['cron', s.cron_expression],
    ['timezone', s.timezone],
    ['input', s.input_data],
    ['provider', s.provider],
    ['enabled', enabledText(s)],
    ['next run', s.next_run_at],
    ['last run', s.last_run_at],
    ['last status', s.last_status],
    ['runs', s.total_runs],
    ['failures', `${s.consecutive_failures} in a row (disabled at ${s.max_consecutive_failures})`],
    ['alert url', s.alert_webhook_url],
    ['alert after', `${s.alert_on_failure_count} failures`],
    ['created', s.created_at],
  ]);
}

/** --alert-url, --alert-after, --disable-after: the failure-streak settings. */
export function alertOptions(command: Command): Command {
  return command
    .option('--alert-url <url>', 'where to POST the schedule.failure_streak alert (alert_webhook_url)')
    .addOption(
      new Option('--alert-after <n>', 'failures in a row that send the alert, 1-100 (default 3)').argParser(
        intArg(1, 100),
      ),
    )
    .addOption(
      new Option(
        '--disable-after <n>',
        'failures in a row after which the platform disables the schedule, 1-100 (default 10)',
      ).argParser(intArg(1, 100)),
    );
}
