import type { JSX } from 'preact';
import type { FormValues, SchemaField } from '../schema-fields.ts';

/**
 * The playground's fields, one per input_schema property: a native input per kind, its label the
 * property's name (marked when required), its description as the hint the input is described by.
 */
export function SchemaForm({
  fields,
  values,
  onChange,
  idPrefix,
}: {
  fields: SchemaField[];
  values: FormValues;
  onChange: (values: FormValues) => void;
  idPrefix: string;
}) {
  const set = (name: string, value: string | boolean) => onChange({ ...values, [name]: value });
  return (
    <>
      {fields.map((f) => {
        const id = `${idPrefix}-${f.name}`;
        const hintId = f.description ? `${id}-hint` : undefined;
        const text = typeof values[f.name] === 'string' ? (values[f.name] as string) : '';
        const common = {
          id,
          name: f.name,
          'aria-required': f.required,
          'aria-describedby': hintId,
        };
        let control: JSX.Element;
        if (f.kind === 'boolean') {
          control = (
            <input
              {...common}
              type="checkbox"
              checked={values[f.name] === true}
              onChange={(e) => set(f.name, e.currentTarget.checked)}
            />
          );
        } else if (f.kind === 'enum') {
          control = (
            <select {...common} value={text} onChange={(e) => set(f.name, e.currentTarget.value)}>
              <option value="">—</option>
              {(f.options ?? []).map((o, i) => (
                <option key={JSON.stringify(o)} value={String(i)}>
                  {typeof o === 'string' ? o : JSON.stringify(o)}
                </option>
              ))}
            </select>
          );
        } else if (f.kind === 'json') {
          control = (
            <textarea
              {...common}
              rows={4}
              spellcheck={false}
              placeholder="JSON"
              value={text}
              onInput={(e) => set(f.name, e.currentTarget.value)}
            />
          );
        } else if (f.kind === 'string') {
          control = (
            <input {...common} type="text" value={text} onInput={(e) => set(f.name, e.currentTarget.value)} />
          );
        } else {
          control = (
            <input
              {...common}
              type="number"
              step={f.kind === 'integer' ? 1 : 'any'}
              value={text}
              onInput={(e) => set(f.name, e.currentTarget.value)}
            />
          );
        }
        return (
          <div key={f.name} class={f.kind === 'boolean' ? 'field field-check' : 'field'}>
            <label for={id}>
              {f.name}
              {f.required && <span class="required"> (required)</span>}
              {f.kind === 'json' && <span class="muted"> (JSON)</span>}
            </label>
            {control}
            {f.description && (
              <small id={hintId} class="muted">
                {f.description}
              </small>
            )}
          </div>
        );
      })}
    </>
  );
}
