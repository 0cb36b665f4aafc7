/*
 * Task routes: a workspace's tasks (the personal workspace unless workspace_id is given).
 * Spread into the route table in functions/platform/routes.ts, whose order they keep.
 */

import {
  taskCreateBody,
  taskIdParams,
  taskListQuery,
  taskListSchema,
  taskSchema,
  taskUpdateBody,
  workspaceIdParams,
} from '../../core/tasks/task-schemas.ts';
import { route } from './route-def.ts';

export const taskRoutes = {
  createTask: route({
    method: 'POST',
    path: '/tasks',
    module: 'tasks',
    auth: 'api-key',
    summary: 'Create a task (in the personal workspace unless workspace_id is given)',
    tag: 'Tasks',
    body: taskCreateBody,
    workspaceRole: 'member',
    success: { status: 201, schema: taskSchema, description: 'Created' },
  }),
  listTasks: route({
    method: 'GET',
    path: '/tasks',
    module: 'tasks',
    auth: 'api-key',
    summary: 'List tasks of the personal workspace (or of workspace_id)',
    tag: 'Tasks',
    query: taskListQuery,
    workspaceRole: 'member',
    success: { status: 200, schema: taskListSchema, description: 'A page of tasks and the total' },
  }),
  getTask: route({
    method: 'GET',
    path: '/tasks/{task_id}',
    module: 'tasks',
    auth: 'api-key',
    summary: 'Get a task',
    tag: 'Tasks',
    params: taskIdParams,
    workspaceRole: 'member',
    success: { status: 200, schema: taskSchema, description: 'The task' },
  }),
  updateTask: route({
    method: 'PATCH',
    path: '/tasks/{task_id}',
    module: 'tasks',
    auth: 'api-key',
    summary: 'Update some of a task’s fields',
    tag: 'Tasks',
    params: taskIdParams,
    workspaceRole: 'member',
    body: taskUpdateBody,
    success: { status: 200, schema: taskSchema, description: 'The updated task' },
  }),
  deleteTask: route({
    method: 'DELETE',
    path: '/tasks/{task_id}',
    module: 'tasks',
    auth: 'api-key',
    summary: 'Delete a task',
    tag: 'Tasks',
    params: taskIdParams,
    workspaceRole: 'member',
    success: { status: 204, description: 'Deleted' },
  }),
  listWorkspaceTasks: route({
    method: 'GET',
    path: '/workspaces/{workspace_id}/tasks',
    module: 'tasks',
    auth: 'api-key',
    summary: 'List a workspace’s tasks',
    tag: 'Tasks',
    params: workspaceIdParams,
    workspaceRole: 'member',
    query: taskListQuery.omit({ workspace_id: true }),
    success: { status: 200, schema: taskListSchema, description: 'A page of tasks and the total' },
  }),
} as const;
