import { triggerSchedule, triggerWebhook, webhookSchedule } from '../core/schedules/schedule-triggers.ts';
import type { CredentialChecks } from '../edge/keyless-bodies.ts';
import type { Operations } from '../edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { createModuleHandler } from './module-handler.ts';

/** The schedule routes that run agents (and so carry the call engines): trigger and the webhook. */
export const operations: Operations<'schedule-runs'> = {
  triggerSchedule: ({ deps, auth, params, body }) =>
    triggerSchedule(deps, auth, params.workspace_id, params.schedule_id, body),
  triggerWebhook: ({ deps, params, body, header }) =>
    triggerWebhook(deps, params.schedule_id, params.webhook_secret, body.data, header('idempotency-key')),
};

/** The webhook's secret is in its path: checked before its body is read (keyless-bodies.ts). */
export const credentialChecks: CredentialChecks = {
  triggerWebhook: (deps, p) => webhookSchedule(deps, p.schedule_id ?? '', p.webhook_secret ?? ''),
};

export const handler = createModuleHandler('schedule-runs', operations, lambdaDeps, credentialChecks);
