/**
 * `agenthost schedules trigger|runs|events`: running a schedule now and reading what its runs did
 * (its run history and its timeline). The schedules themselves are in index.ts, which adds
 * these to its command in this order.
 */
import { type Command, Option } from 'commander';
import type { JsonBody } from '../../../../sdk/src/operation-types.ts';
import { RUN_FIELD_NAMES, SCHEDULE_EVENT_TYPES } from '../../../core/schedules/schedule-names.ts';
import { EXIT } from '../../cli-errors.ts';
import { type Column, printList, printRecord } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { type InputFlags, inputOptions, readInputOption } from '../../input-option.ts';
import { noteMore, type PageFlags, pageOptions, readPages } from '../../paging.ts';

type JsonObject = NonNullable<JsonBody<'triggerSchedule'>['input_data']>;
type Run = Record<string, unknown>;
type ScheduleEvent = { event_id: string; type: string; message: string; at: string };

/** Adds trigger, runs and events to the `schedules` command. */
export function registerScheduleRuns(schedules: Command, cli: CliRuntime): void {
  registerTrigger(schedules, cli);
  registerRuns(schedules, cli);
  registerEvents(schedules, cli);
}

/** `schedules trigger`: runs a schedule now. */
function registerTrigger(schedules: Command, cli: CliRuntime): void {
  inputOptions(
    schedules
      .command('trigger')
      .description('Run a schedule now and print the run (exits 1 if the run fails)')
      .argument('<schedule-id>', 'the schedule’s id'),
    'the input for this run only (default: the schedule’s)',
  )
    .addHelpText(
      'after',
      ['', 'Example:', '  agenthost schedules trigger 3f2a… --input \'{"day":"monday"}\''].join('\n'),
    )
    .action(
      cli.action(async (ctx, id: string, flags: InputFlags) => {
        const input = await readInputOption(ctx, flags);
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        ctx.note(`running schedule ${id} …`);
        const run = await client.schedules.trigger(ws, id, input ? { input_data: input as JsonObject } : {});
        printRecord(ctx, run, [
          ['run', run.run_id],
          ['status', run.status],
          ['duration', `${run.duration_ms} ms`],
          ['output', run.output],
          ['error', run.error],
        ]);
        return run.status === 'success' ? EXIT.ok : EXIT.server;
      }),
    );
}

/** `schedules runs`: a schedule's runs, newest first. */
function registerRuns(schedules: Command, cli: CliRuntime): void {
  pageOptions(
    schedules
      .command('runs')
      .description('List a schedule’s runs, newest first (also of a deleted schedule, for 90 days)')
      .argument('<schedule-id>', 'the schedule’s id')
      .addOption(
        new Option('--status <status>', 'only runs that ended so (failed: error or timeout)').choices([
          'success',
          'error',
          'timeout',
          'failed',
        ]),
      )
      .option('--fields <names>', `only these run fields, comma-separated: ${RUN_FIELD_NAMES.join(', ')}`),
    'runs',
  )
    .addHelpText(
      'after',
      ['', 'Example:', '  agenthost schedules runs 3f2a… --status failed --limit 10'].join('\n'),
    )
    .action(
      cli.action(async (ctx, id: string, flags: PageFlags & { status?: string; fields?: string }) => {
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        const { items, total } = await readPages(flags, async (page) => {
          const answer = await client.schedules.runs(ws, id, {
            ...page,
            ...(flags.status ? { status: flags.status as 'failed' } : {}),
            ...(flags.fields ? { fields: flags.fields } : {}),
          });
          return { items: answer.runs as Run[], total: answer.total };
        });
        printList(ctx, { runs: items, total }, items, runColumns(flags.fields), 'no runs');
        noteMore(ctx, flags, items.length, total);
      }),
    );
}

/** `schedules events`: a schedule's timeline, newest first. */
function registerEvents(schedules: Command, cli: CliRuntime): void {
  pageOptions(
    schedules
      .command('events')
      .description(
        'List a schedule’s timeline (created, updated, disabled, alerts, missed slots …), newest first',
      )
      .argument('<schedule-id>', 'the schedule’s id')
      .addOption(new Option('--type <type>', 'only entries of this type').choices(SCHEDULE_EVENT_TYPES))
      .addHelpText(
        'after',
        ['', 'Example:', '  agenthost schedules events 3f2a… --type auto_disabled --limit 10'].join('\n'),
      ),
    'entries',
  ).action(
    cli.action(
      async (ctx, id: string, flags: PageFlags & { type?: (typeof SCHEDULE_EVENT_TYPES)[number] }) => {
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        const { items, total } = await readPages(flags, async (page) => {
          const answer = await client.schedules.events(ws, id, {
            ...page,
            ...(flags.type ? { type: flags.type } : {}),
          });
          return { items: answer.events as ScheduleEvent[], total: answer.total };
        });
        printList(
          ctx,
          { events: items, total },
          items,
          [
            { header: 'AT', value: (e: ScheduleEvent) => e.at },
            { header: 'TYPE', value: (e: ScheduleEvent) => e.type },
            { header: 'MESSAGE', value: (e: ScheduleEvent) => e.message },
          ],
          'no events',
        );
        noteMore(ctx, flags, items.length, total);
      },
    ),
  );
}

/** The runs table: the usual columns, or the --fields asked for, in their order. */
function runColumns(fields: string | undefined): Column<Run>[] {
  if (fields)
    return fields
      .split(',')
      .map((f) => f.trim())
      .filter(Boolean)
      .map((f) => ({ header: f.toUpperCase(), value: (r: Run) => r[f] }));
  return [
    { header: 'RUN', value: (r) => r.run_id },
    { header: 'TRIGGER', value: (r) => r.trigger },
    { header: 'STATUS', value: (r) => r.status },
    { header: 'STARTED', value: (r) => r.started_at },
    { header: 'DURATION', value: (r) => (typeof r.duration_ms === 'number' ? `${r.duration_ms} ms` : null) },
    { header: 'ERROR', value: (r) => r.error },
  ];
}
