/**
 * `agenthost schedules …`: cron and webhook schedules of a workspace (docs/schedules.md): create
 * and change them, run one now, read its runs and timeline, test its alert. This file holds the
 * group and its small commands; create.ts, update.ts and runs.ts add the others, in this order.
 */
import { type Command, Option } from 'commander';
import { EXIT } from '../../cli-errors.ts';
import { printJson, printList, printRecord } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { noteMore, type PageFlags, pageOptions, readPages } from '../../paging.ts';
import { registerScheduleCreate } from './create.ts';
import { registerScheduleRuns } from './runs.ts';
import { scheduleColumns, showSchedule } from './schedule-view.ts';
import { registerScheduleUpdate } from './update.ts';

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

  registerScheduleCreate(schedules, cli);

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

  registerScheduleUpdate(schedules, cli);

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
        const result = await client.schedules.testAlert(ws, id);
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
        await client.schedules.delete(ws, id);
        if (ctx.json) printJson(ctx, { deleted: id });
        else ctx.note(`deleted schedule ${id}`);
      }),
    );
}
