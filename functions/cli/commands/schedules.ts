/**
 * `agenthost schedules …`: cron and webhook schedules of a workspace (docs/schedules.md): create
 * and change them, run one now, read its runs and timeline, test its alert. A webhook schedule's
 * URL carries its secret and the API shows it once, in the create answer: the CLI prints it then,
 * marked as such, and never again.
 */
import { type Command, Option } from 'commander';
import { unwrap } from '../../../sdk/src/errors.ts';
import type { paths } from '../../../sdk/src/generated/openapi.ts';
import type { CliContext, Client } from '../cli-context.ts';
import { CliError, EXIT } from '../cli-errors.ts';
import { type Column, printJson, printList, printRecord } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { type InputFlags, inputOptions, readInputOption } from '../input-option.ts';
import { intArg } from '../option-parsers.ts';
import { noteMore, type PageFlags, pageOptions, readPages } from '../paging.ts';
import { registerScheduleRuns } from './schedule-runs.ts';

type Schedule = Awaited<ReturnType<Client['schedules']['list']>>['schedules'][number];
type ScheduleCreate = Parameters<Client['schedules']['create']>[1];
type ScheduleUpdate = NonNullable<
  paths['/workspaces/{workspace_id}/schedules/{schedule_id}']['patch']['requestBody']
>['content']['application/json'];
type JsonObject = NonNullable<ScheduleUpdate['input_data']>;
type Provider = 'anthropic' | 'openai' | 'google' | 'ollama';

const PROVIDERS: Provider[] = ['anthropic', 'openai', 'google', 'ollama'];

interface CreateFlags extends InputFlags {
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

interface UpdateFlags extends InputFlags {
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

const scheduleColumns: Column<Schedule>[] = [
  { header: 'ID', value: (s) => s.id },
  { header: 'AGENT', value: (s) => `${s.agent}@${s.agent_version}` },
  { header: 'WHEN', value: when },
  { header: 'ENABLED', value: enabledText },
  { header: 'NEXT RUN', value: (s) => s.next_run_at },
  { header: 'LAST', value: (s) => s.last_status },
];

function showSchedule(ctx: CliContext, s: Schedule): void {
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
function alertOptions(command: Command): Command {
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

export function registerSchedules(program: Command, cli: CliRuntime): void {
  const schedules = program
    .command('schedules')
    .description('Run agents on a cron timetable or from a webhook; their runs, timelines and alerts');

  pageOptions(
    schedules
      .command('list')
      .description('List the workspace’s schedules')
      .option('--agent <org/name>', 'only the schedules of this agent')
      .addOption(new Option('--type <type>', 'only this type').choices(['cron', 'webhook']))
      .addHelpText(
        'after',
        ['', 'Example:', '  agenthost schedules list --agent acme/report --type cron --all'].join('\n'),
      ),
    'schedules',
  ).action(
    cli.action(async (ctx, flags: PageFlags & { agent?: string; type?: 'cron' | 'webhook' }) => {
      const client = await ctx.client();
      const ws = await ctx.workspace(client);
      const filter = {
        ...(flags.agent ? { agent: flags.agent } : {}),
        ...(flags.type ? { type: flags.type } : {}),
      };
      const { items, total } = await readPages(flags, async (page) => {
        const { schedules: found, total: all } = await client.schedules.list(ws, { ...filter, ...page });
        return { items: found, total: all };
      });
      printList(ctx, { schedules: items, total }, items, scheduleColumns, 'no schedules');
      noteMore(ctx, flags, items.length, total);
    }),
  );

  alertOptions(
    inputOptions(
      schedules
        .command('create')
        .description('Create a cron schedule (--cron) or a webhook trigger (--webhook) for an agent')
        .argument('<agent>', 'org/name (follows new versions) or org/name@v2 (pinned)')
        .option('--cron <expression>', 'five-field Unix cron, e.g. "0 9 * * 1-5" (docs/cron.md)')
        .option('--webhook', 'run on a POST to a secret URL, printed once, instead of on a timetable')
        .option('--timezone <zone>', 'the IANA zone the cron expression is read in (default UTC)'),
      'the agent’s input for every run',
    )
      .addOption(new Option('--provider <provider>', 'the model provider for its runs').choices(PROVIDERS))
      .option('--disabled', 'create it disabled (enable it later with `schedules enable`)')
      .option('--auto-update', 'follow newly published versions (the default unless pinned)')
      .option('--no-auto-update', 'stay on the current version'),
  )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  agenthost schedules create acme/report --cron "0 9 * * 1-5" --timezone Europe/Paris --input \'{"team":"ops"}\'',
        '  agenthost schedules create acme/deploy-notes --webhook',
        'A webhook schedule’s URL holds its secret: it is printed once, on stdout (the whole answer',
        'with --json), and cannot be shown again; to replace it, delete the schedule and create another.',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, agent: string, flags: CreateFlags) => {
        if (flags.cron !== undefined && flags.webhook)
          throw new CliError('give --cron or --webhook, not both', EXIT.usage);
        if (flags.cron === undefined && !flags.webhook)
          throw new CliError(
            'a schedule needs --cron EXPRESSION or --webhook',
            EXIT.usage,
            'agenthost schedules create org/name --cron "0 9 * * *"',
          );
        const input = await readInputOption(ctx, flags);
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        const body: ScheduleCreate = {
          agent,
          type: flags.webhook ? 'webhook' : 'cron',
          ...(flags.cron !== undefined ? { cron_expression: flags.cron } : {}),
          ...(flags.timezone !== undefined ? { timezone: flags.timezone } : {}),
          ...(input ? { input_data: input as JsonObject } : {}),
          ...(flags.provider ? { provider: flags.provider } : {}),
          ...(flags.disabled ? { enabled: false } : {}),
          ...(flags.autoUpdate !== undefined ? { auto_update: flags.autoUpdate } : {}),
          ...(flags.alertUrl !== undefined ? { alert_webhook_url: flags.alertUrl } : {}),
          ...(flags.alertAfter !== undefined ? { alert_on_failure_count: flags.alertAfter } : {}),
          ...(flags.disableAfter !== undefined ? { max_consecutive_failures: flags.disableAfter } : {}),
        };
        const created = (await client.schedules.create(ws, body)) as Schedule & { webhook_url?: string };
        if (created.webhook_url === undefined) {
          showSchedule(ctx, created);
          return;
        }
        // A platform without a public URL set answers a path; the CLI knows where it sent the request.
        const url = created.webhook_url.startsWith('/')
          ? `${(await ctx.resolve()).url}${created.webhook_url}`
          : created.webhook_url;
        if (ctx.json) {
          printJson(ctx, { ...created, webhook_url: url });
          return;
        }
        ctx.note(`created webhook schedule ${created.id} running ${created.agent}@${created.agent_version}`);
        ctx.note('The webhook URL is shown once; store it now (POST JSON to it to run the agent):');
        ctx.out(url);
      }),
    );

  schedules
    .command('get')
    .description('Show a schedule')
    .argument('<schedule-id>', 'the schedule’s id (schedules list)')
    .addHelpText('after', ['', 'Example:', '  agenthost schedules get 3f2a… --json'].join('\n'))
    .action(
      cli.action(async (ctx, id: string) => {
        const client = await ctx.client();
        showSchedule(ctx, await client.schedules.get(await ctx.workspace(client), id));
      }),
    );

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
        showSchedule(ctx, await patchSchedule(client, await ctx.workspace(client), id, body));
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
          const s = await patchSchedule(client, await ctx.workspace(client), id, { enabled });
          showSchedule(ctx, s);
        }),
      );

  registerScheduleRuns(schedules, cli);

  schedules
    .command('test-alert')
    .description(
      'Send a test failure alert to the schedule’s alert URL now (exits 1 if it was not delivered)',
    )
    .argument('<schedule-id>', 'the schedule’s id')
    .addHelpText('after', ['', 'Example:', '  agenthost schedules test-alert 3f2a…'].join('\n'))
    .action(
      cli.action(async (ctx, id: string) => {
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        const result = unwrap(
          await client.api.POST('/workspaces/{workspace_id}/schedules/{schedule_id}/test-alert', {
            params: { path: { workspace_id: ws, schedule_id: id } },
          }),
        );
        printRecord(ctx, result, [
          ['delivered', result.delivered ? 'yes' : 'no'],
          ['attempts', result.attempts],
          ['status code', result.status_code],
          ['error', result.error],
        ]);
        return result.delivered ? EXIT.ok : EXIT.server;
      }),
    );

  schedules
    .command('delete')
    .description('Delete a schedule (its runs and timeline stay readable for 90 days)')
    .argument('<schedule-id>', 'the schedule’s id')
    .addHelpText('after', ['', 'Example:', '  agenthost schedules delete 3f2a…'].join('\n'))
    .action(
      cli.action(async (ctx, id: string) => {
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        unwrap(
          await client.api.DELETE('/workspaces/{workspace_id}/schedules/{schedule_id}', {
            params: { path: { workspace_id: ws, schedule_id: id } },
          }),
        );
        if (ctx.json) printJson(ctx, { deleted: id });
        else ctx.note(`deleted schedule ${id}`);
      }),
    );
}

async function patchSchedule(
  client: Client,
  ws: string,
  id: string,
  body: ScheduleUpdate,
): Promise<Schedule> {
  return unwrap(
    await client.api.PATCH('/workspaces/{workspace_id}/schedules/{schedule_id}', {
      params: { path: { workspace_id: ws, schedule_id: id } },
      body,
    }),
  );
}
