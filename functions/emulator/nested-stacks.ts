import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CfnTemplate, TemplateError } from './cloudformation-template.ts';

/**
 * Nested stacks (`AWS::CloudFormation::Stack`, CDK's NestedStack) folded into the stack that holds
 * them, as CloudFormation deploys them: each nested template's resources join its parent's, a
 * `Ref` to one of its parameters becomes the value the parent passes, and the parent's
 * `Fn::GetAtt [<nested>, Outputs.<name>]` becomes that output's value. The stacks exist for
 * CloudFormation's limits (500 resources a stack: lib/stateless-stack.ts); the emulated deployment
 * has none, and folding keeps the physical names it gives (`<stack>-<logical id>`) as they were
 * before the resources moved. CDK keeps construct ids below a nested stack, so a logical id
 * appearing in both a parent and its nested stack is an error, never silently merged.
 */

const NESTED = 'AWS::CloudFormation::Stack';

/** The nested template a parent's TemplateURL names (its asset's object key, `<hash>.json`). */
export type NestedTemplateReader = (objectKey: string) => CfnTemplate;

interface Template extends CfnTemplate {
  Parameters?: Record<string, { Default?: unknown }>;
}

/** Replaces every `{ Ref: name }` for which `values` has a value, anywhere in `value`. */
function substituteRefs(value: unknown, values: (name: string) => unknown | undefined): unknown {
  if (Array.isArray(value)) return value.map((v) => substituteRefs(v, values));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 1 && entries[0]?.[0] === 'Ref' && typeof entries[0][1] === 'string') {
    const found = values(entries[0][1]);
    if (found !== undefined) return found;
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, substituteRefs(v, values)]));
}

/** Replaces every `Fn::GetAtt` of a nested stack's output with `output(stackId, name)`. */
function substituteOutputs(
  value: unknown,
  output: (stackId: string, name: string) => unknown | undefined,
): unknown {
  if (Array.isArray(value)) return value.map((v) => substituteOutputs(v, output));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 1 && entries[0]?.[0] === 'Fn::GetAtt') {
    const arg = entries[0][1];
    const [id, attr] = Array.isArray(arg) ? arg.map(String) : String(arg).split(/\.(.*)/s);
    if (id !== undefined && attr?.startsWith('Outputs.')) {
      const found = output(id, attr.slice('Outputs.'.length));
      if (found !== undefined) return found;
    }
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, substituteOutputs(v, output)]));
}

/** `template` with its nested stacks (and theirs) folded in. */
export function foldNestedStacks(template: CfnTemplate, read: NestedTemplateReader): CfnTemplate {
  const resources: CfnTemplate['Resources'] = {};
  const outputs = new Map<string, Record<string, { Value: unknown }>>();
  const nestedIds = new Set<string>();
  const folded: CfnTemplate['Resources'] = {};
  for (const [id, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== NESTED) {
      resources[id] = resource;
      continue;
    }
    nestedIds.add(id);
    const url = JSON.stringify(resource.Properties?.TemplateURL ?? '');
    const key = /([0-9a-f]{64}\.json)/.exec(url)?.[1];
    if (!key) throw new TemplateError(`${id}: no nested template named in ${url}`);
    const nested = foldNestedStacks(read(key), read) as Template;
    const given = (resource.Properties?.Parameters ?? {}) as Record<string, unknown>;
    const declared = nested.Parameters ?? {};
    const parameter = (name: string) => {
      if (!(name in declared)) return undefined;
      const value = given[name] ?? declared[name]?.Default;
      if (value === undefined) throw new TemplateError(`${id}: no value for its parameter ${name}`);
      return value;
    };
    for (const [nestedId, r] of Object.entries(nested.Resources)) {
      if (nestedId in template.Resources || nestedId in folded) {
        throw new TemplateError(`${id}: its resource ${nestedId} has the logical id of another`);
      }
      folded[nestedId] = substituteRefs(r, parameter) as CfnTemplate['Resources'][string];
    }
    outputs.set(id, substituteRefs(nested.Outputs ?? {}, parameter) as Record<string, { Value: unknown }>);
  }
  if (nestedIds.size === 0) return template;
  // A parameter of one nested stack may be another's output (the parent passes it through).
  const output = (stackId: string, name: string): unknown => {
    const of = outputs.get(stackId);
    if (!of) return undefined;
    const o = of[name];
    if (!o) throw new TemplateError(`${stackId} has no output ${name}`);
    return substituteOutputs(o.Value, output);
  };
  const parent = substituteOutputs(
    { Resources: { ...resources, ...folded }, Outputs: template.Outputs ?? {} },
    output,
  ) as Required<Pick<CfnTemplate, 'Resources' | 'Outputs'>>;
  // A resource waits for a nested stack on CloudFormation; folded, there is nothing to wait for.
  for (const r of Object.values(parent.Resources)) {
    if (r.DependsOn === undefined) continue;
    const after = [r.DependsOn].flat().filter((d) => !nestedIds.has(d));
    if (after.length === 0) delete r.DependsOn;
    else r.DependsOn = after;
  }
  return { ...template, Resources: parent.Resources, Outputs: parent.Outputs };
}

/**
 * Reads nested templates from a cloud assembly: the asset manifests (`*.assets.json`) map each
 * nested template's object key to its file in the assembly's directory.
 */
export function assemblyNestedTemplates(directory: string): NestedTemplateReader {
  const files = new Map<string, string>();
  for (const name of readdirSync(directory)) {
    if (!name.endsWith('.assets.json')) continue;
    const manifest = JSON.parse(readFileSync(join(directory, name), 'utf8')) as {
      files?: Record<
        string,
        { source?: { path?: string }; destinations?: Record<string, { objectKey?: string }> }
      >;
    };
    for (const file of Object.values(manifest.files ?? {})) {
      const path = file.source?.path;
      if (!path?.endsWith('.template.json')) continue;
      for (const d of Object.values(file.destinations ?? {})) if (d.objectKey) files.set(d.objectKey, path);
    }
  }
  return (objectKey) => {
    const path = files.get(objectKey);
    if (!path) throw new TemplateError(`The assembly has no nested template ${objectKey}`);
    return JSON.parse(readFileSync(join(directory, path), 'utf8')) as CfnTemplate;
  };
}
