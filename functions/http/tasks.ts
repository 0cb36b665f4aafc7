import { completeTask, createTask, deleteTask, getTask, listTasks, updateTask } from '../core/tasks/tasks.ts';
import type { Operations } from '../edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { createModuleHandler } from './module-handler.ts';

export const operations: Operations<'tasks'> = {
  createTask: ({ deps, auth, body }) => createTask(deps, auth, body),
  listTasks: ({ deps, auth, query }) =>
    listTasks(deps, auth, query.workspace_id ?? auth.personalWorkspaceId, query),
  listWorkspaceTasks: ({ deps, auth, params, query }) => listTasks(deps, auth, params.workspace_id, query),
  getTask: ({ deps, auth, params }) => getTask(deps, auth, params.task_id),
  updateTask: ({ deps, auth, params, body }) => updateTask(deps, auth, params.task_id, body),
  completeTask: ({ deps, auth, params }) => completeTask(deps, auth, params.task_id),
  deleteTask: async ({ deps, auth, params }) => {
    await deleteTask(deps, auth, params.task_id);
    return undefined;
  },
};

export const handler = createModuleHandler('tasks', operations, lambdaDeps);
