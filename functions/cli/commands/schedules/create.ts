/**
 * `agenthost schedules create`: a cron schedule, or a webhook trigger whose URL carries its secret.
 * The API shows that URL once, in the create answer: the CLI prints it then, marked as such, and
 * never again.
 */
import { type Command, Option } from 'commander';
import { CliError, EXIT } from '../../cli-errors.ts';
import { printJson } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { inputOptions, readInputOption } from '../../input-option.ts';
import {
  alertOptions,
  type CreateFlags,
  type JsonObject,
  PROVIDERS,
  type Schedule,
  type ScheduleCreate,
  showSchedule,
} from './schedule-view.ts';

/** Adds create to the `schedules` command. */
export function registerScheduleCreate(schedules: Command, cli: CliRuntime): void {
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
}
