/** `agenthost schedules runs`: a schedule's run history, newest first. */
import { type Command, Option } from 'commander';
import { RUN_FIELD_NAMES } from '../../../core/schedules/schedule-names.ts';
import { type Column, printList } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { noteMore, type PageFlags, pageOptions, readPages } from '../../paging.ts';

type Run = Record<string, unknown>;

export function registerScheduleRuns(schedules: Command, cli: CliRuntime): void {
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
