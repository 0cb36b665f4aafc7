import * as z from 'zod';
import { jsonBytes, MAX_INPUT_DATA_BYTES, overBytes } from '../../shared/byte-limits.ts';
import { intParam } from '../../shared/query-params.ts';
import { nextOffsetSchema } from '../payloads/answer-page.ts';
import { RUN_FIELD_NAMES, SCHEDULE_EVENT_TYPES } from './schedule-names.ts';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from './webhook-limits.ts';

/** A schedule's input_data: stored on the schedule and sent to every run, so bounded in bytes. */
const inputData = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  const size = jsonBytes(value);
  if (size > MAX_INPUT_DATA_BYTES)
    ctx.addIssue({ code: 'custom', message: overBytes(MAX_INPUT_DATA_BYTES, size) });
});

const agentRef = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,38}\/[a-z0-9][a-z0-9-]{0,63}(@v[1-9][0-9]{0,5})?$/,
    'must be org/agent or org/agent@vN',
  );

const alertFields = {
  alert_webhook_url: z.url().max(2048).nullable().optional(),
  alert_on_failure_count: z.number().int().min(1).max(100).optional(),
  max_consecutive_failures: z
    .number()
    .int()
    .min(1, 'must be 1 to 100')
    .max(100, 'must be 1 to 100')
    .optional(),
};

export const scheduleCreateBody = z.strictObject({
  agent: agentRef.describe('org/agent (follows new versions) or org/agent@vN (pinned)'),
  type: z.enum(['cron', 'webhook']).default('cron'),
  cron_expression: z
    .string()
    .max(200)
    .optional()
    .describe('Five-field Unix cron (docs/cron.md); cron type only'),
  timezone: z
    .string()
    .max(64)
    .default('UTC')
    .describe('IANA time zone; abbreviations such as EST are refused'),
  input_data: inputData.default({}),
  provider: z.enum(['anthropic', 'openai', 'google', 'ollama']).nullable().optional(),
  enabled: z.boolean().default(true),
  auto_update: z
    .boolean()
    .optional()
    .describe('Follow new versions (default true unless a version is pinned)'),
  ...alertFields,
});

export const scheduleUpdateBody = z
  .strictObject({
    cron_expression: z.string().max(200).optional(),
    timezone: z.string().max(64).optional(),
    input_data: inputData.optional(),
    provider: z.enum(['anthropic', 'openai', 'google', 'ollama']).nullable().optional(),
    enabled: z.boolean().optional(),
    version: z
      .string()
      .regex(/^v[1-9][0-9]{0,5}$/, 'must be a version such as v3')
      .optional()
      .describe('Pin this version'),
    auto_update: z.boolean().optional(),
    ...alertFields,
  })
  .refine((b) => Object.keys(b).length > 0, 'must set at least one field');

export const scheduleListQuery = z.strictObject({
  agent: z.string().max(110).optional().describe('org/agent'),
  type: z.enum(['cron', 'webhook']).optional(),
  limit: intParam(1, 200).default(50),
  offset: intParam(0, 1_000_000).default(0),
});

export const scheduleParams = z.strictObject({
  workspace_id: z.string().min(1).max(100),
  schedule_id: z.string().min(1).max(100),
});

export const scheduleSchema = z.looseObject({
  id: z.uuid(),
  workspace_id: z.uuid(),
  agent: z.string(),
  agent_version: z.string(),
  pinned: z.boolean(),
  auto_update: z.boolean(),
  type: z.enum(['cron', 'webhook']),
  cron_expression: z.string().nullable(),
  timezone: z.string(),
  input_data: z.record(z.string(), z.unknown()),
  provider: z.string().nullable(),
  enabled: z.boolean(),
  auto_disabled: z.boolean(),
  consecutive_failures: z.number().int(),
  max_consecutive_failures: z.number().int(),
  alert_webhook_url: z.string().nullable(),
  alert_on_failure_count: z.number().int(),
  next_run_at: z.string().nullable(),
  last_run_at: z.string().nullable(),
  last_status: z.string().nullable(),
  total_runs: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const scheduleListSchema = z.object({
  schedules: z.array(scheduleSchema),
  total: z.number().int(),
  next_offset: nextOffsetSchema,
});

export { RUN_FIELD_NAMES, SCHEDULE_EVENT_TYPES } from './schedule-names.ts';

export const scheduleRunsQuery = z.strictObject({
  status: z
    .enum(['success', 'error', 'timeout', 'failed'])
    .optional()
    .describe('failed means error or timeout'),
  fields: z
    .string()
    .max(500)
    .transform((v, ctx) => {
      const list = v
        .split(',')
        .map((f) => f.trim())
        .filter(Boolean);
      const unknown = list.filter((f) => !(RUN_FIELD_NAMES as readonly string[]).includes(f));
      if (unknown.length > 0 || list.length === 0) {
        ctx.addIssue({
          code: 'custom',
          message: `unknown field(s) ${unknown.join(', ') || '(none given)'}; choose from ${RUN_FIELD_NAMES.join(', ')}`,
        });
        return z.NEVER;
      }
      return list as (typeof RUN_FIELD_NAMES)[number][];
    })
    .optional()
    .describe('Comma-separated run fields to return'),
  limit: intParam(1, 200).default(50),
  offset: intParam(0, 1_000_000).default(0),
});

export const scheduleEventsQuery = z.strictObject({
  type: z.enum(SCHEDULE_EVENT_TYPES).optional(),
  limit: intParam(1, 200).default(50),
  offset: intParam(0, 1_000_000).default(0),
});

export const scheduleTriggerBody = z.strictObject({
  input_data: inputData.optional().describe('Replaces the schedule’s input_data for this run'),
});

export const runSchema = z.object({
  run_id: z.uuid(),
  status: z.enum(['success', 'error', 'timeout']),
  duration_ms: z.number().int(),
  output: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe(
      'The agent’s data; when too large to answer inline (docs/schedules.md), a download link instead: {output_url, output_bytes, output_sha256, expires_at}, with output_as_url true',
    ),
  error: z.string().nullable(),
  deduplicated: z.boolean(),
  output_as_url: z
    .literal(true)
    .optional()
    .describe('Present when `output` is a download link: the output was too large to answer inline'),
});

export const runListSchema = z.object({
  runs: z.array(z.record(z.string(), z.unknown())),
  total: z.number().int(),
  next_offset: nextOffsetSchema,
});

export const eventListSchema = z.object({
  events: z.array(
    z.object({
      event_id: z.uuid(),
      type: z.string(),
      message: z.string(),
      at: z.string(),
      details: z.record(z.string(), z.unknown()),
    }),
  ),
  total: z.number().int(),
});

export const testAlertSchema = z.object({
  delivered: z.boolean(),
  attempts: z.number().int(),
  status_code: z.number().int().nullable(),
  error: z.string().nullable(),
});

export const webhookParams = z.strictObject({
  schedule_id: z.string().min(1).max(100),
  webhook_secret: z.string().min(1).max(200),
});

export type ScheduleRunsQuery = z.infer<typeof scheduleRunsQuery>;
export type ScheduleEventsQuery = z.infer<typeof scheduleEventsQuery>;
export type ScheduleTriggerInput = z.infer<typeof scheduleTriggerBody>;
export type ScheduleCreateInput = z.infer<typeof scheduleCreateBody>;
export type ScheduleUpdateInput = z.infer<typeof scheduleUpdateBody>;
export type ScheduleListQuery = z.infer<typeof scheduleListQuery>;

/** The webhook trigger's optional header, for /openapi.json (schedule-triggers.ts checks it). */
export const webhookHeaders = z.object({
  'idempotency-key': z
    .string()
    .min(1)
    .max(MAX_IDEMPOTENCY_KEY_LENGTH)
    .optional()
    .describe('A repeated key within the deduplication window returns the first run, deduplicated'),
});
