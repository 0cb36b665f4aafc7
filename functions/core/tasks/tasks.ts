import { randomUUID } from 'node:crypto';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { cond, queryAll } from '../../ports/store.ts';
import { notFound } from '../../shared/errors.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { sizedSlice } from '../payloads/answer-page.ts';
import { spreadRetries, updateWithRevision } from '../revision.ts';
import { requireMembership } from '../workspaces/authorize.ts';
import { readTask, taskEntity, taskKeys } from './task-record.ts';
import type { Task, TaskCreateInput, TaskListQuery, TaskUpdateInput } from './task-schemas.ts';

/** Creates a task in the given workspace (default: the caller's personal one). Any member may. */
export async function createTask(deps: CoreDeps, auth: AuthContext, input: TaskCreateInput): Promise<Task> {
  const workspaceId = input.workspace_id ?? auth.personalWorkspaceId;
  await requireMembership(deps, auth.accountId, workspaceId, 'member');
  const now = deps.clock.now().toISOString();
  const status = input.status ?? 'open';
  const task: Task = {
    id: randomUUID(),
    workspace_id: workspaceId,
    title: input.title,
    description: input.description ?? null,
    due_date: input.due_date ?? null,
    project: input.project ?? null,
    priority: input.priority ?? 'normal',
    status,
    created_by: auth.agent,
    created_at: now,
    updated_at: now,
    completed_at: status === 'done' ? now : null,
  };
  await deps.store.put(taskEntity.toItem({ ...task, version: 1 }), { condition: cond.notExists() });
  return task;
}

/**
 * Lists a workspace's tasks, newest first. Filters apply before paging, so `total` counts every
 * match. The workspace's task partition is read whole (a Query on GSI1, never a Scan).
 */
export async function listTasks(
  deps: CoreDeps,
  auth: AuthContext,
  workspaceId: string,
  query: TaskListQuery,
): Promise<{ tasks: Task[]; total: number; next_offset: number | null }> {
  await requireMembership(deps, auth.accountId, workspaceId, 'member');
  const items = await queryAll(deps.store, {
    index: 'gsi1',
    pk: taskKeys.ofWorkspace(workspaceId),
    reverse: true,
  });
  const today = deps.clock.now().toISOString().slice(0, 10);
  const matches = items
    .map((item) => readTask(item).task)
    .filter((t) => {
      if (query.status && t.status !== query.status) return false;
      if (query.priority && t.priority !== query.priority) return false;
      if (query.project !== undefined && t.project !== query.project) return false;
      if (query.overdue && !(t.status === 'open' && t.due_date !== null && t.due_date < today)) return false;
      return true;
    });
  // 200 tasks of 50,000-character descriptions are 10 MB or more: pages are bounded by size too.
  const { page, next_offset } = sizedSlice(matches, query.offset, query.limit);
  return { tasks: page, total: matches.length, next_offset };
}

export async function getTask(deps: CoreDeps, auth: AuthContext, taskId: string): Promise<Task> {
  const { task } = await loadTask(deps, auth, taskId);
  return task;
}

const MAX_UPDATE_ATTEMPTS = 25;

/**
 * Applies a partial update. completed_at is set when the status becomes done (kept if it was
 * already done) and cleared when it returns to open or in_progress. The write is conditional on
 * the version read, and retried, so concurrent PATCHes never lose one another's fields.
 */
export async function updateTask(
  deps: CoreDeps,
  auth: AuthContext,
  taskId: string,
  patch: TaskUpdateInput,
): Promise<Task> {
  const outcome = await updateWithRevision({
    attempts: MAX_UPDATE_ATTEMPTS,
    load: () => loadTask(deps, auth, taskId),
    decide: ({ task }) => {
      const now = deps.clock.now().toISOString();
      const next: Task = { ...task, updated_at: now };
      if (patch.title !== undefined) next.title = patch.title;
      if (patch.description !== undefined) next.description = patch.description;
      if (patch.due_date !== undefined) next.due_date = patch.due_date;
      if (patch.project !== undefined) next.project = patch.project;
      if (patch.priority !== undefined) next.priority = patch.priority;
      if (patch.status !== undefined) {
        next.status = patch.status;
        if (patch.status === 'done' && task.status !== 'done') next.completed_at = now;
        if (patch.status === 'open' || patch.status === 'in_progress') next.completed_at = null;
      }
      return next;
    },
    write: async ({ version }, next) => {
      await deps.store.put(taskEntity.toItem({ ...next, version: version + 1 }), {
        condition: cond.eq('version', version),
      });
    },
    // Another writer won this round: back off a little, with jitter, and re-read.
    backoff: spreadRetries,
  });
  if (outcome.status === 'written') return outcome.decision;
  throw outcome.status === 'contended'
    ? outcome.error
    : new Error('unreachable: a task update always decides');
}

/** The spec's "or complete" (task state table): the same as a PATCH with status done. */
export function completeTask(deps: CoreDeps, auth: AuthContext, taskId: string): Promise<Task> {
  return updateTask(deps, auth, taskId, { status: 'done' });
}

export async function deleteTask(deps: CoreDeps, auth: AuthContext, taskId: string): Promise<void> {
  await loadTask(deps, auth, taskId);
  await deps.store.delete(taskKeys.task(taskId));
}

/** A task the caller may see: in a workspace the caller is a member of. Otherwise 404, as if absent. */
async function loadTask(
  deps: CoreDeps,
  auth: AuthContext,
  taskId: string,
): Promise<{ task: Task; version: number }> {
  const item = await deps.store.get(taskKeys.task(taskId));
  if (!item) throw notFound('Task');
  const stored = readTask(item);
  await requireMembership(deps, auth.accountId, stored.task.workspace_id, 'member', { resource: 'Task' });
  return stored;
}
