import type { AgentHostClient } from '../api-client.ts';

/** A task as the API answers it, and the values its status and priority take (the spec's). */
export type Task = Awaited<ReturnType<AgentHostClient['tasks']['get']>>;
export const STATUSES = ['open', 'in_progress', 'done', 'cancelled'] as const;
export const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export type Status = (typeof STATUSES)[number];
export type Priority = (typeof PRIORITIES)[number];
