import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import { ApiError } from '../api-error.tsx';
import { useChosenWorkspace } from '../chosen-workspace.ts';
import { LoadMore, useOffsetList } from '../components/load-more.tsx';
import { QueryState } from '../components/query-state.tsx';
import { TaskFormFields } from '../components/task-form-fields.tsx';
import { formatTime } from '../format.ts';
import { type PageProps, pageHref } from '../page-links.ts';
import { useSession } from '../session.tsx';
import { TaskDetail } from './task-detail.tsx';
import { PRIORITIES, type Priority, STATUSES, type Status, type Task } from './task-fields.ts';

/** What GET /tasks filters by (besides the workspace, which is the chosen one). */
interface Filters {
  status?: Status;
  priority?: Priority;
  project?: string;
  overdue?: boolean;
}

/** `#/tasks` is the chosen workspace's list; `#/tasks/ID` is one task. */
export function Tasks({ params }: PageProps) {
  const id = params[0];
  return id ? <TaskDetail taskId={id} /> : <TaskList />;
}

function TaskList() {
  const { client, workspaceId } = useSession();
  const { workspace } = useChosenWorkspace();
  const queryClient = useQueryClient();
  const [filters, setFilters] = useState<Filters>({});
  const list = useOffsetList(['tasks', 'list', workspaceId, filters], async (page) => {
    const { tasks, total } = await client.tasks.list({
      workspace_id: workspaceId,
      ...(filters.status ? { status: filters.status } : {}),
      ...(filters.priority ? { priority: filters.priority } : {}),
      ...(filters.project ? { project: filters.project } : {}),
      ...(filters.overdue ? { overdue: 'true' as const } : {}),
      ...page,
    });
    return { items: tasks, total };
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['tasks'] });
  const [rowError, setRowError] = useState<unknown>(null);

  const act = async (action: () => Promise<unknown>) => {
    setRowError(null);
    try {
      await action();
      await refresh();
    } catch (err) {
      setRowError(err);
    }
  };

  return (
    <div class="tasks-page">
      <h1>Tasks</h1>
      <p class="muted">Tasks of {workspace?.name ?? 'this workspace'}: yours and those its agents made.</p>

      <FilterForm value={filters} onApply={setFilters} />

      <QueryState query={list.query} what="tasks" />
      {rowError !== null && <ApiError error={rowError} title="Could not change the task" />}
      {list.query.isSuccess &&
        (list.items.length === 0 ? (
          <p>No tasks match.</p>
        ) : (
          <>
            <div class="table-scroll">
              <table data-testid="tasks">
                <thead>
                  <tr>
                    <th scope="col">Title</th>
                    <th scope="col">Status</th>
                    <th scope="col">Priority</th>
                    <th scope="col">Project</th>
                    <th scope="col">Due</th>
                    <th scope="col">Created by</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {list.items.map((t) => (
                    <tr key={t.id}>
                      <th scope="row">
                        <a href={pageHref('/tasks', t.id)}>{t.title}</a>
                      </th>
                      <td>
                        <select
                          aria-label={`Status of ${t.title}`}
                          value={t.status}
                          onChange={(e) => {
                            const status = e.currentTarget.value as Status;
                            void act(() => client.tasks.update(t.id, { status }));
                          }}
                        >
                          {STATUSES.map((s) => (
                            <option key={s} value={s}>
                              {s}
                            </option>
                          ))}
                        </select>
                      </td>
                      <td>{t.priority}</td>
                      <td>{t.project ?? '—'}</td>
                      <td>{t.due_date ?? '—'}</td>
                      <td>{t.created_by ?? '—'}</td>
                      <td>
                        {t.status === 'done' ? (
                          <span class="muted">done {formatTime(t.completed_at)}</span>
                        ) : (
                          <button
                            type="button"
                            class="secondary"
                            aria-label={`Complete ${t.title}`}
                            onClick={() => act(() => client.tasks.complete(t.id))}
                          >
                            Complete
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <LoadMore list={list} />
          </>
        ))}

      <CreateTaskForm workspaceId={workspaceId} onCreated={refresh} />
    </div>
  );
}

/** Filters apply on "Apply" (one request per choice, not per keystroke in the project field). */
function FilterForm({ value, onApply }: { value: Filters; onApply: (f: Filters) => void }) {
  const [draft, setDraft] = useState<Filters>(value);
  return (
    <form
      class="toolbar filters"
      aria-label="Filter tasks"
      onSubmit={(e) => {
        e.preventDefault();
        onApply({ ...draft, project: draft.project?.trim() || undefined });
      }}
    >
      <label>
        Status{' '}
        <select
          name="filter-status"
          value={draft.status ?? ''}
          onChange={(e) => setDraft({ ...draft, status: (e.currentTarget.value || undefined) as Status })}
        >
          <option value="">any</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <label>
        Priority{' '}
        <select
          name="filter-priority"
          value={draft.priority ?? ''}
          onChange={(e) => setDraft({ ...draft, priority: (e.currentTarget.value || undefined) as Priority })}
        >
          <option value="">any</option>
          {PRIORITIES.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
      <label>
        Project{' '}
        <input
          name="filter-project"
          size={12}
          value={draft.project ?? ''}
          onInput={(e) => setDraft({ ...draft, project: e.currentTarget.value })}
        />
      </label>
      <label class="check">
        <input
          type="checkbox"
          name="filter-overdue"
          checked={draft.overdue ?? false}
          onChange={(e) => setDraft({ ...draft, overdue: e.currentTarget.checked || undefined })}
        />{' '}
        Overdue only
      </label>
      <button type="submit" class="secondary">
        Apply filters
      </button>
    </form>
  );
}

function CreateTaskForm({ workspaceId, onCreated }: { workspaceId: string; onCreated: () => unknown }) {
  const { client } = useSession();
  const empty = { title: '', description: '', due_date: '', project: '', priority: 'normal', status: 'open' };
  const [form, setForm] = useState(empty);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<Task | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setCreated(null);
    try {
      const task = await client.tasks.create({
        workspace_id: workspaceId,
        title: form.title,
        ...(form.description ? { description: form.description } : {}),
        ...(form.due_date ? { due_date: form.due_date } : {}),
        ...(form.project.trim() ? { project: form.project.trim() } : {}),
        priority: form.priority as Priority,
        status: form.status as Status,
      });
      setForm(empty);
      setCreated(task);
      await onCreated();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="stack" onSubmit={submit} aria-labelledby="create-task-heading">
      <h2 id="create-task-heading">New task</h2>
      <TaskFormFields form={form} setForm={setForm} namePrefix="task" />
      <div>
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create task'}
        </button>
      </div>
      {created && (
        <p role="status" class="ok">
          Created <a href={pageHref('/tasks', created.id)}>{created.title}</a>.
        </p>
      )}
      {error !== null && <ApiError error={error} title="Could not create the task" />}
    </form>
  );
}
