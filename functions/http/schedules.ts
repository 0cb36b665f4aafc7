import { listScheduleEvents, listScheduleRuns } from '../core/schedules/schedule-history.ts';
import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  listSchedules,
  sendTestAlert,
  updateSchedule,
} from '../core/schedules/schedules.ts';
import type { Operations } from '../edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { createModuleHandler } from './module-handler.ts';

export const operations: Operations<'schedules'> = {
  listSchedules: ({ deps, auth, params, query }) => listSchedules(deps, auth, params.workspace_id, query),
  createSchedule: ({ deps, auth, params, body }) => createSchedule(deps, auth, params.workspace_id, body),
  getSchedule: ({ deps, auth, params }) => getSchedule(deps, auth, params.workspace_id, params.schedule_id),
  updateSchedule: ({ deps, auth, params, body }) =>
    updateSchedule(deps, auth, params.workspace_id, params.schedule_id, body),
  deleteSchedule: async ({ deps, auth, params }) => {
    await deleteSchedule(deps, auth, params.workspace_id, params.schedule_id);
    return undefined;
  },
  listScheduleEvents: ({ deps, auth, params, query }) =>
    listScheduleEvents(deps, auth, params.workspace_id, params.schedule_id, query),
  listScheduleRuns: ({ deps, auth, params, query }) =>
    listScheduleRuns(deps, auth, params.workspace_id, params.schedule_id, query),
  sendScheduleTestAlert: ({ deps, auth, params }) =>
    sendTestAlert(deps, auth, params.workspace_id, params.schedule_id),
};

export const handler = createModuleHandler('schedules', operations, lambdaDeps);
