import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import { ApiError } from '../api-error.tsx';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { QueryState } from '../components/query-state.tsx';
import { TaskFormFields } from '../components/task-form-fields.tsx';
import { formatTime } from '../format.ts';
import { pageHref } from '../page-links.ts';
import { useSession } from '../session.tsx';
import type { Priority, Status, Task } from './task-fields.ts';

/** One task (`#/tasks/ID`): every field the API gives, an edit form, complete and delete. */
export function TaskDetail({ taskId }: { taskId: string }) {
  const { client } = useSession();
  const task = useQuery({ queryKey: ['tasks', 'one', taskId], queryFn: () => client.tasks.get(taskId) });
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const t = task.data;

  return (
    <div class="task-detail">
      <p>
        <a href={pageHref('/tasks')}>← Tasks</a>
      </p>
      <QueryState query={task} what="the task" />
      {t && (
        <>
          <h1>{t.title}</h1>
          <dl class="fields" data-testid="task-fields">
            <dt>Status</dt>
            <dd data-testid="task-status">{t.status}</dd>
            <dt>Priority</dt>
            <dd>{t.priority}</dd>
            <dt>Project</dt>
            <dd>{t.project ?? '—'}</dd>
            <dt>Due</dt>
            <dd>{t.due_date ?? '—'}</dd>
            <dt>Created by</dt>
            <dd>{t.created_by ?? '—'}</dd>
            <dt>Created</dt>
            <dd>{formatTime(t.created_at)}</dd>
            <dt>Updated</dt>
            <dd>{formatTime(t.updated_at)}</dd>
            <dt>Completed</dt>
            <dd>{formatTime(t.completed_at)}</dd>
            <dt>Id</dt>
            <dd>
              <code>{t.id}</code>
            </dd>
          </dl>
          {t.description && (
            <>
              <h2>Description</h2>
              <p class="task-description">{t.description}</p>
            </>
          )}
          <div class="toolbar">
            {t.status !== 'done' && (
              <button
                type="button"
                onClick={async () => {
                  setError(null);
                  try {
                    await client.tasks.complete(t.id);
                    await queryClient.invalidateQueries({ queryKey: ['tasks'] });
                  } catch (err) {
                    setError(err);
                  }
                }}
              >
                Complete
              </button>
            )}
            <ConfirmButton
              label="Delete"
              title={`Delete the task “${t.title}”?`}
              onConfirm={async () => {
                await client.tasks.delete(t.id);
                queryClient.removeQueries({ queryKey: ['tasks', 'one', t.id] });
                await queryClient.invalidateQueries({ queryKey: ['tasks', 'list'] });
                window.location.hash = pageHref('/tasks');
              }}
            >
              <p>The task is deleted for everyone in the workspace, its agents included.</p>
            </ConfirmButton>
          </div>
          {error !== null && <ApiError error={error} title="Could not complete the task" />}
          {/* Keyed by updated_at, so the form starts again from what the API holds after any change. */}
          <EditTaskForm key={t.updated_at} task={t} />
        </>
      )}
    </div>
  );
}

/**
 * Sends only the fields that changed; an emptied optional field is sent as null, which the API
 * takes as "clear it".
 */
function EditTaskForm({ task }: { task: Task }) {
  const { client } = useSession();
  const queryClient = useQueryClient();
  const initial = {
    title: task.title,
    description: task.description ?? '',
    due_date: task.due_date ?? '',
    project: task.project ?? '',
    priority: task.priority as string,
    status: task.status as string,
  };
  const [form, setForm] = useState(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    const changes: Parameters<typeof client.tasks.update>[1] = {};
    if (form.title !== initial.title) changes.title = form.title;
    if (form.description !== initial.description) changes.description = form.description || null;
    if (form.due_date !== initial.due_date) changes.due_date = form.due_date || null;
    if (form.project !== initial.project) changes.project = form.project.trim() || null;
    if (form.priority !== initial.priority) changes.priority = form.priority as Priority;
    if (form.status !== initial.status) changes.status = form.status as Status;
    if (Object.keys(changes).length === 0) return;
    setBusy(true);
    setError(null);
    try {
      await client.tasks.update(task.id, changes);
      await queryClient.invalidateQueries({ queryKey: ['tasks'] });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="stack" onSubmit={submit} aria-labelledby="edit-task-heading">
      <h2 id="edit-task-heading">Edit</h2>
      <TaskFormFields form={form} setForm={setForm} namePrefix="edit" />
      <div>
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save changes'}
        </button>
      </div>
      {error !== null && <ApiError error={error} title="Could not save the task" />}
    </form>
  );
}
