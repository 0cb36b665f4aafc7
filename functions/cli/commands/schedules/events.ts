/** `agenthost schedules events`: a schedule's timeline, newest first. */
import { type Command, Option } from 'commander';
import { SCHEDULE_EVENT_TYPES } from '../../../core/schedules/schedule-names.ts';
import { printList } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { noteMore, type PageFlags, pageOptions, readPages } from '../../paging.ts';

type ScheduleEvent = { event_id: string; type: string; message: string; at: string };

export function registerScheduleEvents(schedules: Command, cli: CliRuntime): void {
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
