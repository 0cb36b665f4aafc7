/**
 * The cases of error-field-names.test.ts: each field of a route's JSON body and each query
 * parameter sent wrong on its own (a wrong type, a value out of the schema's range or format, an
 * unknown field), derived from the route table's zod schemas, with the one field the 400 must name.
 */
import assert from 'node:assert/strict';
import type * as z from 'zod';
import type { RouteDef } from '../../functions/platform/routes.ts';

export type Json = Record<string, unknown>;
export type Path = string[];

export interface Fixture {
  path: string;
  /** Valid bodies: each field is made wrong in the first one that has it (else added to the first). */
  bodies: Json[];
  /** Why a valid body is not sent on its own first (it would run an agent, for instance). */
  noSanityCheck?: string;
}

export interface Case {
  method: string;
  path: string;
  body?: unknown;
  /** The one field the answer must name. */
  field: string;
  why: string;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const getIn = (root: unknown, path: Path): unknown =>
  path.reduce<unknown>((v, k) => (isObject(v) || Array.isArray(v) ? (v as Json)[k] : undefined), root);

function setIn(root: Json, path: Path, value: unknown): Json {
  const copy = structuredClone(root);
  let at: Json = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Json;
  at[path[path.length - 1] as string] = value;
  return copy;
}

// ---------------------------------------------------------------------------------------------
// Reading zod schemas (v4 internals: _zod.def), to derive the wrong values of each field.

// biome-ignore lint/suspicious/noExplicitAny: zod's internal definitions are untyped here
type Def = any;
export const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;
const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'nonoptional', 'catch']);

/** The schema under optional/nullable/default wrappers, and the input side of a pipe (transform). */
export function inner(s: z.ZodType): z.ZodType {
  let at = s;
  for (;;) {
    const d = defOf(at);
    if (WRAPPERS.has(d.type)) at = d.innerType;
    else if (d.type === 'pipe') at = d.in;
    else return at;
  }
}

/** The output side of a pipe (intParam: a string of digits piped into a bounded integer). */
function piped(s: z.ZodType): z.ZodType | undefined {
  let at = s;
  for (;;) {
    const d = defOf(at);
    if (WRAPPERS.has(d.type)) at = d.innerType;
    else return d.type === 'pipe' ? d.out : undefined;
  }
}

const checksOf = (s: z.ZodType): Def[] =>
  (defOf(s).checks ?? []).map((c: { _zod: { def: Def } }) => c._zod.def);

interface Wrong {
  value: unknown;
  why: string;
  /** Below the field itself: an array element (['0']) or a record entry (['k']). */
  sub?: Path;
}

function stringWrongs(s: z.ZodType): Wrong[] {
  const out: Wrong[] = [];
  const d = defOf(s);
  if (d.format) out.push({ value: 'not !! valid', why: `not a ${d.format}` });
  for (const c of checksOf(s)) {
    if (c.check === 'min_length' && c.minimum > 0) out.push({ value: '', why: `empty (min ${c.minimum})` });
    if (c.check === 'max_length')
      out.push({ value: 'a'.repeat(c.maximum + 1), why: `longer than ${c.maximum}` });
    if (c.check === 'string_format' && !d.format)
      out.push({ value: 'not !! valid', why: `not a ${c.format}` });
  }
  return out;
}

function numberWrongs(s: z.ZodType): Wrong[] {
  const out: Wrong[] = [];
  let low: number | undefined;
  for (const c of checksOf(s)) {
    if (c.check === 'greater_than') {
      low = c.value;
      out.push({ value: c.inclusive ? c.value - 1 : c.value, why: `below ${c.value}` });
    }
    if (c.check === 'less_than')
      out.push({ value: c.inclusive ? c.value + 1 : c.value, why: `above ${c.value}` });
  }
  if (checksOf(s).some((c) => c.check === 'number_format' && /int/.test(c.format)))
    out.push({ value: (low ?? 1) + 1.5, why: 'not a whole number' });
  return out;
}

/** Wrong values for a body field: the wrong JSON type, then out of range or format. */
function bodyWrongs(schema: z.ZodType, current: unknown): Wrong[] {
  const s = inner(schema);
  const d = defOf(s);
  switch (d.type) {
    case 'string':
      return [{ value: 12345, why: 'a number for a string' }, ...stringWrongs(s)];
    case 'number':
      return [{ value: '7', why: 'a string for a number' }, ...numberWrongs(s)];
    case 'boolean':
      return [{ value: 'true', why: 'a string for a boolean' }];
    case 'enum':
      return [{ value: 'zzz-not-an-option', why: 'not one of the options' }];
    case 'literal':
      return [{ value: typeof d.values[0] === 'number' ? d.values[0] + 1 : 'zzz', why: 'not the literal' }];
    case 'object':
      return [{ value: 'text', why: 'a string for an object' }];
    case 'record': {
      const key = isObject(current) && Object.keys(current)[0] ? (Object.keys(current)[0] as string) : 'KEY1';
      const values = bodyWrongs(d.valueType, undefined).map((w) => ({
        value: { [key]: w.value },
        why: `entry: ${w.why}`,
        sub: [key, ...(w.sub ?? [])],
      }));
      return [{ value: 'text', why: 'a string for an object' }, ...values];
    }
    case 'array': {
      const out: Wrong[] = [{ value: 'text', why: 'a string for an array' }];
      for (const c of checksOf(s))
        if (c.check === 'min_length' && c.minimum > 0)
          out.push({ value: [], why: `empty (min ${c.minimum})` });
      for (const w of bodyWrongs(d.element, undefined))
        out.push({ value: [w.value], why: `element: ${w.why}`, sub: ['0', ...(w.sub ?? [])] });
      return out;
    }
    default:
      return []; // unknown, union: any value is the field's own business (or no wrong type exists)
  }
}

/** Wrong values for a query parameter (always a string on the wire). */
export function queryWrongs(schema: z.ZodType): Wrong[] {
  const s = inner(schema);
  const d = defOf(s);
  if (d.type === 'enum') return [{ value: 'zzz-not-an-option', why: 'not one of the options' }];
  if (d.type !== 'string') return [];
  const out = stringWrongs(s);
  const out2 = piped(schema);
  if (out2 && defOf(inner(out2)).type === 'number') {
    out.push({ value: 'abc', why: 'not a number' });
    for (const w of numberWrongs(inner(out2)))
      if (Number.isInteger(w.value)) out.push({ ...w, value: String(w.value) });
  }
  return out;
}

/** The object schema a route's JSON body is documented by (a manifest: its fields, not the outline). */
function bodyObjectSchema(r: RouteDef): z.ZodType {
  const schema = r.documentedBody ?? (r.body as z.ZodType);
  const d = defOf(inner(schema));
  if (d.type === 'union') return d.options.find((o: z.ZodType) => defOf(inner(o)).type === 'object');
  return schema;
}

/** Every single-field-wrong body of a route, from its schema and valid bodies. */
export function bodyCases(r: RouteDef, fixture: Fixture): Case[] {
  const cases: Case[] = [];
  const walk = (schema: z.ZodType, at: Path, roots: Json[]) => {
    const shape = defOf(inner(schema)).shape as Record<string, z.ZodType>;
    for (const [key, field] of Object.entries(shape)) {
      const path = [...at, key];
      const host = roots.find((b) => getIn(b, path) !== undefined) ?? (roots[0] as Json);
      for (const w of bodyWrongs(field, getIn(host, path))) {
        cases.push({
          method: r.method,
          path: fixture.path,
          body: setIn(host, path, w.value),
          field: ['body', ...path, ...(w.sub ?? [])].join('.'),
          why: w.why,
        });
      }
      const d = defOf(inner(field));
      const objects = roots.filter((b) => isObject(getIn(b, path)));
      if (d.type === 'object' && objects.length > 0) walk(field, path, objects);
      const withElements = roots.filter((b) => isObject(getIn(b, [...path, '0'])));
      if (d.type === 'array' && defOf(inner(d.element)).type === 'object' && withElements.length > 0)
        walk(d.element, [...path, '0'], withElements);
    }
    const base = roots[0] as Json;
    cases.push({
      method: r.method,
      path: fixture.path,
      body: setIn(base, [...at, 'zz_unknown'], 1),
      field: ['body', ...at, 'zz_unknown'].join('.'),
      why: 'a field the schema does not have',
    });
  };
  walk(bodyObjectSchema(r), [], fixture.bodies);
  return cases;
}

/** A route's path with its parameters filled from `ids`. */
export const fillPath = (template: string, ids: Record<string, string>) =>
  template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const id = ids[name];
    assert.ok(id, `no value for path parameter ${name} of ${template}`);
    return encodeURIComponent(id);
  });
