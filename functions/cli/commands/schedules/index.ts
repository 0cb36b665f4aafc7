/**
 * `agenthost schedules …`: cron and webhook schedules of a workspace (docs/schedules.md): create
 * and change them, run one now, read its runs and timeline, test its alert. This file makes the
 * group; each command has a file, added in this order.
 */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { registerScheduleCreate } from './create.ts';
import { registerScheduleDelete } from './delete.ts';
import { registerScheduleEvents } from './events.ts';
import { registerScheduleGet } from './get.ts';
import { registerScheduleList } from './list.ts';
import { registerScheduleRuns } from './runs.ts';
import { registerScheduleTestAlert } from './test-alert.ts';
import { registerScheduleTrigger } from './trigger.ts';
import { registerScheduleUpdate } from './update.ts';

export function registerSchedules(program: Command, cli: CliRuntime): void {
  const schedules = program
    .command('schedules')
    .description('Run agents on a cron timetable or from a webhook; their runs, timelines and alerts');
  registerScheduleList(schedules, cli);
  registerScheduleCreate(schedules, cli);
  registerScheduleGet(schedules, cli);
  registerScheduleUpdate(schedules, cli);
  registerScheduleTrigger(schedules, cli);
  registerScheduleRuns(schedules, cli);
  registerScheduleEvents(schedules, cli);
  registerScheduleTestAlert(schedules, cli);
  registerScheduleDelete(schedules, cli);
}
