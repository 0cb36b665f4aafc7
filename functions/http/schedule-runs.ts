import { triggerSchedule, triggerWebhook } from '../core/schedules/schedule-triggers.ts';
import { createModuleHandler, type Operations } from '../platform/http-handler.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';

/** The schedule routes that run agents (and so carry the call engines): trigger and the webhook. */
export const operations: Operations<'schedule-runs'> = {
  triggerSchedule: ({ deps, auth, params, body }) =>
    triggerSchedule(deps, auth, params.workspace_id, params.schedule_id, body),
  triggerWebhook: ({ deps, params, body, header }) =>
    triggerWebhook(deps, params.schedule_id, params.webhook_secret, body.data, header('idempotency-key')),
};

export const handler = createModuleHandler('schedule-runs', operations, lambdaDeps);
