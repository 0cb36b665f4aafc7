/**
 * The playground's form, read from a version's input_schema: one field per top-level property.
 * Strings, numbers, integers, booleans and enums get their own inputs; anything else (nested
 * objects, arrays, unions) is a JSON text field. The form keeps what the user typed as text and
 * turns it into the input on submit; it does not validate beyond parsing: the API checks the input
 * against the schema and its INVALID_INPUT names the field.
 */

export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';

export interface SchemaField {
  name: string;
  kind: FieldKind;
  required: boolean;
  description?: string;
  /** For enums: the allowed values, in the schema's order. */
  options?: unknown[];
}

/** What each field holds while the user edits: text (enums: the option's index), or a boolean. */
export type FormValues = Record<string, string | boolean>;

type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

function kindOf(schema: Schema): FieldKind {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return 'enum';
  const type = schema.type;
  if (type === 'string' || type === 'number' || type === 'integer' || type === 'boolean') return type;
  return 'json';
}

/** The fields of an input_schema; none when it has no properties (then raw JSON is the way in). */
export function schemaFields(inputSchema: unknown): SchemaField[] {
  if (!isObject(inputSchema) || !isObject(inputSchema.properties)) return [];
  const required = new Set(Array.isArray(inputSchema.required) ? inputSchema.required : []);
  return Object.entries(inputSchema.properties).map(([name, raw]) => {
    const schema = isObject(raw) ? raw : {};
    const kind = kindOf(schema);
    return {
      name,
      kind,
      required: required.has(name),
      ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
      ...(kind === 'enum' ? { options: schema.enum as unknown[] } : {}),
    };
  });
}

/** The form's starting values: each property's `default` where the schema gives one. */
export function initialValues(inputSchema: unknown, fields: SchemaField[]): FormValues {
  const props = isObject(inputSchema) && isObject(inputSchema.properties) ? inputSchema.properties : {};
  const defaults: Record<string, unknown> = {};
  for (const f of fields) {
    const d = (props[f.name] as Schema | undefined)?.default;
    if (d !== undefined) defaults[f.name] = d;
  }
  return valuesFromInput(fields, defaults);
}

/** An input object as form values (switching from raw JSON back to the form). */
export function valuesFromInput(fields: SchemaField[], input: Record<string, unknown>): FormValues {
  const values: FormValues = {};
  for (const f of fields) {
    const v = input[f.name];
    if (f.kind === 'boolean') values[f.name] = v === true;
    else if (v === undefined) values[f.name] = '';
    else if (f.kind === 'enum') {
      const i = (f.options ?? []).findIndex((o) => JSON.stringify(o) === JSON.stringify(v));
      values[f.name] = i < 0 ? '' : String(i);
    } else if (f.kind === 'json') values[f.name] = JSON.stringify(v, null, 2);
    else values[f.name] = String(v);
  }
  return values;
}

/**
 * The input the form describes. Empty fields are left out (a required one then draws the API's
 * INVALID_INPUT); a number field that is not a number, or JSON that does not parse, is an error
 * naming the field, since it cannot be sent as typed.
 */
export function inputFromValues(
  fields: SchemaField[],
  values: FormValues,
): { input: Record<string, unknown> } | { error: string } {
  const input: Record<string, unknown> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (f.kind === 'boolean') {
      input[f.name] = v === true;
      continue;
    }
    const text = typeof v === 'string' ? v : '';
    if (text.trim() === '') continue;
    if (f.kind === 'string') input[f.name] = text;
    else if (f.kind === 'enum') input[f.name] = f.options?.[Number(text)];
    else if (f.kind === 'number' || f.kind === 'integer') {
      const n = Number(text);
      if (!Number.isFinite(n)) return { error: `${f.name}: not a number` };
      input[f.name] = n;
    } else {
      try {
        input[f.name] = JSON.parse(text);
      } catch {
        return { error: `${f.name}: not valid JSON` };
      }
    }
  }
  return { input };
}

/** Raw JSON mode's text as an input object, or why it is not one. */
export function parseInputJson(text: string): { input: Record<string, unknown> } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { error: `Not valid JSON: ${(err as Error).message}` };
  }
  if (!isObject(value)) return { error: 'The input must be a JSON object ({ … })' };
  return { input: value };
}
