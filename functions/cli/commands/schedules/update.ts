/**
 * `agenthost schedules update|enable|disable`: changing a schedule's settings, and turning it on
 * and off (each a PATCH of the schedule).
 */
import { type Command, Option } from 'commander';
import { CliError, EXIT } from '../../cli-errors.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { inputOptions, readInputOption } from '../../input-option.ts';
import {
  alertOptions,
  type JsonObject,
  PROVIDERS,
  type ScheduleUpdate,
  showSchedule,
  type UpdateFlags,
} from './schedule-view.ts';

/** Adds update, enable and disable to the `schedules` command. */
export function registerScheduleUpdate(schedules: Command, cli: CliRuntime): void {
  alertOptions(
    inputOptions(
      schedules
        .command('update')
        .description('Change a schedule: timetable, zone, input, provider, version, alerts')
        .argument('<schedule-id>', 'the schedule’s id')
        .option('--cron <expression>', 'a new five-field cron expression (cron schedules)')
        .option('--timezone <zone>', 'a new IANA time zone'),
      'a new input for its runs (replaces the whole input)',
    )
      .addOption(new Option('--provider <provider>', 'the model provider for its runs').choices(PROVIDERS))
      .option('--no-provider', 'use the agent’s default provider')
      .option('--pin <version>', 'run this version (v3) from now on, and stop following new ones')
      .option('--auto-update', 'follow newly published versions (moves to the newest now)')
      .option('--no-auto-update', 'stay on the current version')
      .option('--no-alert-url', 'send no failure alerts'),
  )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  agenthost schedules update 3f2a… --cron "30 8 * * *" --timezone America/New_York',
        '  agenthost schedules update 3f2a… --pin v4',
        'Turn it on and off with `schedules enable` and `schedules disable`.',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, id: string, flags: UpdateFlags) => {
        if (flags.pin !== undefined && !/^v[1-9][0-9]*$/.test(flags.pin))
          throw new CliError(`--pin ${flags.pin} is not a version`, EXIT.usage, 'write it as v3');
        const input = await readInputOption(ctx, flags);
        const body: ScheduleUpdate = {
          ...(flags.cron !== undefined ? { cron_expression: flags.cron } : {}),
          ...(flags.timezone !== undefined ? { timezone: flags.timezone } : {}),
          ...(input ? { input_data: input as JsonObject } : {}),
          ...(flags.provider !== undefined
            ? { provider: flags.provider === false ? null : flags.provider }
            : {}),
          ...(flags.pin !== undefined ? { version: flags.pin } : {}),
          ...(flags.autoUpdate !== undefined ? { auto_update: flags.autoUpdate } : {}),
          ...(flags.alertUrl !== undefined
            ? { alert_webhook_url: flags.alertUrl === false ? null : flags.alertUrl }
            : {}),
          ...(flags.alertAfter !== undefined ? { alert_on_failure_count: flags.alertAfter } : {}),
          ...(flags.disableAfter !== undefined ? { max_consecutive_failures: flags.disableAfter } : {}),
        };
        if (Object.keys(body).length === 0)
          throw new CliError('nothing to change', EXIT.usage, 'give at least one setting: see --help');
        const client = await ctx.client();
        showSchedule(ctx, await client.schedules.update(await ctx.workspace(client), id, body));
      }),
    );

  for (const [name, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const)
    schedules
      .command(name)
      .description(
        enabled
          ? 'Enable a schedule (also one the platform disabled after failures: the failure count restarts)'
          : 'Disable a schedule: no cron runs, and its webhook answers 409 until it is enabled',
      )
      .argument('<schedule-id>', 'the schedule’s id')
      .addHelpText('after', ['', 'Example:', `  agenthost schedules ${name} 3f2a…`].join('\n'))
      .action(
        cli.action(async (ctx, id: string) => {
          const client = await ctx.client();
          showSchedule(ctx, await client.schedules.update(await ctx.workspace(client), id, { enabled }));
        }),
      );
}
