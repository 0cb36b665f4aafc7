import type { Dispatch, StateUpdater } from 'preact/hooks';
import { PRIORITIES, STATUSES } from '../pages/task-fields.ts';

/** A task's editable fields as the forms hold them: text, '' for none. */
export interface TaskFormValues {
  title: string;
  description: string;
  due_date: string;
  project: string;
  priority: string;
  status: string;
}

/**
 * The fields of a task, the same in the create form (tasks.tsx) and the edit form
 * (task-detail.tsx); each form decides what it sends.
 */
export function TaskFormFields({
  form,
  setForm,
  namePrefix,
}: {
  form: TaskFormValues;
  setForm: Dispatch<StateUpdater<TaskFormValues>>;
  namePrefix: string;
}) {
  // From the state as it is when the event comes, not as this render saw it: two events between
  // renders must not undo each other.
  const update = (name: keyof TaskFormValues) => (e: { currentTarget: { value: string } }) => {
    const value = e.currentTarget.value;
    setForm((prev) => ({ ...prev, [name]: value }));
  };
  const field = (name: keyof TaskFormValues) => ({
    name: `${namePrefix}-${name}`,
    value: form[name],
    onInput: update(name),
  });
  const choice = (name: keyof TaskFormValues) => ({
    name: `${namePrefix}-${name}`,
    value: form[name],
    onChange: update(name),
  });
  return (
    <>
      <label>
        Title
        <input required {...field('title')} />
      </label>
      <label>
        Description
        <textarea {...field('description')} />
      </label>
      <label>
        Due date
        <input type="date" {...field('due_date')} />
      </label>
      <label>
        Project
        <input {...field('project')} />
      </label>
      <label>
        Priority
        <select {...choice('priority')}>
          {PRIORITIES.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
      <label>
        Status
        <select {...choice('status')}>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
    </>
  );
}
