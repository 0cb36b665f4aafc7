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
  setForm: (next: TaskFormValues) => void;
  namePrefix: string;
}) {
  const field = (name: keyof TaskFormValues) => ({
    name: `${namePrefix}-${name}`,
    value: form[name],
    onInput: (e: { currentTarget: { value: string } }) => setForm({ ...form, [name]: e.currentTarget.value }),
    onChange: (e: { currentTarget: { value: string } }) =>
      setForm({ ...form, [name]: e.currentTarget.value }),
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
        <select {...field('priority')}>
          {PRIORITIES.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
      <label>
        Status
        <select {...field('status')}>
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
