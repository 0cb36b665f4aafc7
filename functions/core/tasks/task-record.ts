import * as z from 'zod';
import type { Item, ItemKey } from '../../ports/store.ts';
import { defineEntity } from '../entity.ts';
import { type Task, taskSchema } from './task-schemas.ts';

/** The key shapes of a task (docs/data-model.md): by id, and in GSI1 under its workspace. */
export const taskKeys = {
  task: (taskId: string): ItemKey => ({ pk: `TASK#${taskId}`, sk: 'TASK' }),
  /** GSI1 partition of a workspace's tasks, sorted by creation time. */
  ofWorkspace: (workspaceId: string) => `WS#${workspaceId}#TASK`,
};

/**
 * The stored task: the API's task object (task-schemas.ts) and its `version`, which every update
 * conditions on. Optional fields absent from an item read as null, a missing `updated_at` as the
 * creation time and a missing `version` as 1, as before the entity had a schema.
 */
export const taskEntity = defineEntity({
  name: 'task',
  keys: taskKeys,
  schema: taskSchema.extend({
    id: z.string(),
    workspace_id: z.string(),
    description: z.string().nullable().default(null),
    due_date: z.string().nullable().default(null),
    project: z.string().nullable().default(null),
    created_by: z.string().nullable().default(null),
    updated_at: z.string().optional(),
    completed_at: z.string().nullable().default(null),
    version: z.number().default(1),
  }),
  locate: (task) => ({
    ...taskKeys.task(task.id),
    gsi1pk: taskKeys.ofWorkspace(task.workspace_id),
    gsi1sk: `${task.created_at}#${task.id}`,
  }),
});

/** A stored task and the version an update conditions on. */
export function readTask(item: Item): { task: Task; version: number } {
  const { version, updated_at, ...task } = taskEntity.fromItem(item);
  return { task: { ...task, updated_at: updated_at ?? task.created_at }, version };
}
