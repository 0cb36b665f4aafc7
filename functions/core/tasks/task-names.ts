/** A task's statuses and priorities, apart from the schemas (task-schemas.ts): the CLI names them without loading zod. */
export const TASK_STATUSES = ['open', 'in_progress', 'done', 'cancelled'] as const;

export const TASK_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
