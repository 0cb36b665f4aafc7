import * as z from 'zod';
import { intParam } from '../../shared/query-params.ts';
import { nextOffsetSchema } from '../payloads/answer-page.ts';
import { TASK_PRIORITIES, TASK_STATUSES } from './task-names.ts';

export { TASK_PRIORITIES, TASK_STATUSES } from './task-names.ts';

/** YYYY-MM-DD that names a real calendar day (2026-02-30 is refused). */
export const calendarDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date in YYYY-MM-DD format')
  .refine((s) => {
    const d = new Date(`${s}T00:00:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
  }, 'must be a real calendar date');

const title = z.string().trim().min(1, 'must not be empty').max(500);
const description = z.string().max(50_000);
const project = z.string().trim().min(1, 'must not be empty').max(100);

export const taskCreateBody = z.strictObject({
  title,
  description: description.optional(),
  due_date: calendarDate.optional(),
  project: project.optional(),
  priority: z.enum(TASK_PRIORITIES).optional(),
  status: z.enum(TASK_STATUSES).optional(),
  workspace_id: z
    .uuid()
    .optional()
    .describe('Target workspace; the caller’s personal workspace when omitted'),
});

/** PATCH: any subset; null clears an optional field. */
export const taskUpdateBody = z
  .strictObject({
    title: title.optional(),
    description: description.nullable().optional(),
    due_date: calendarDate.nullable().optional(),
    project: project.nullable().optional(),
    status: z.enum(TASK_STATUSES).optional(),
    priority: z.enum(TASK_PRIORITIES).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'must set at least one field');

export const taskListQuery = z.strictObject({
  limit: intParam(1, 200).default(50),
  offset: intParam(0, 1_000_000).default(0),
  status: z.enum(TASK_STATUSES).optional(),
  project: z.string().min(1).max(100).optional(),
  priority: z.enum(TASK_PRIORITIES).optional(),
  overdue: z
    .enum(['true', 'false'], 'must be true or false')
    .transform((v) => v === 'true')
    .optional(),
  workspace_id: z
    .uuid()
    .optional()
    .describe('GET /tasks only: list this workspace instead of the personal one'),
});

export const taskIdParams = z.strictObject({ task_id: z.string().min(1).max(100) });
export const workspaceIdParams = z.strictObject({ workspace_id: z.string().min(1).max(100) });

export const taskSchema = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  title: z.string(),
  description: z.string().nullable(),
  due_date: z.string().nullable(),
  project: z.string().nullable(),
  priority: z.enum(TASK_PRIORITIES),
  status: z.enum(TASK_STATUSES),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  completed_at: z.string().nullable(),
});

export const taskListSchema = z.object({
  tasks: z.array(taskSchema),
  total: z.number().int(),
  next_offset: nextOffsetSchema,
});

export type Task = z.infer<typeof taskSchema>;
export type TaskCreateInput = z.infer<typeof taskCreateBody>;
export type TaskUpdateInput = z.infer<typeof taskUpdateBody>;
export type TaskListQuery = z.infer<typeof taskListQuery>;
