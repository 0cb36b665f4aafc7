/**
 * Agent types: a TypeScript module declaring a published agent's input and output types (from its
 * input_schema and output_schema, with json-schema-to-typescript) and a typed ref, so that
 * `client.agents.call(summarise, input)` is checked by the compiler. A dev-time tool: only this
 * module (`@agenthost/sdk/agent-types`, the `agenthost-sdk types` command) loads the generator,
 * never `createClient`'s import path.
 */
import { compile } from 'json-schema-to-typescript';
import { parseAgentRef } from './call.ts';
import type { AgentHostClient } from './client.ts';
import { AgentHostError } from './errors.ts';
import { safeSchema } from './safe-schema.ts';

/** What the generator needs of an agent: its ref and its two schemas (null: none). */
export interface AgentSchemas {
  /** org/name@v2 (or org/name/v2), optionally with /endpoint. */
  ref: string;
  input_schema: unknown;
  output_schema: unknown;
}

export interface AgentTypesOptions {
  /** The exported ref's name (default: the agent's name in camelCase, `pdfReader`). */
  name?: string;
  /** Where the module imports the AgentRef type from (default `@agenthost/sdk`). */
  sdkImport?: string;
}

const SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/;
const ENDPOINT = /^[A-Za-z0-9_-]{1,64}$/;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
// Words a `const` cannot be named (ECMAScript's reserved words, strict mode's, and TypeScript's
// type keywords, which a type name cannot be).
const RESERVED = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false ' +
    'finally for function if import in instanceof new null return super switch this throw true try ' +
    'typeof var void while with yield let static implements interface package private protected ' +
    'public await any boolean never number object string symbol undefined unknown bigint'
  ).split(' '),
);

/**
 * The ref as the module writes it: each part checked against the platform's naming rules, since
 * it lands in the module's code and comments (parseAgentRef alone lets `*` and quotes through).
 */
function canonicalRef(ref: string): { text: string; org: string; agent: string } {
  const { org, agent, version, endpoint } = parseAgentRef(ref);
  if (!SLUG.test(org) || !SLUG.test(agent) || (endpoint !== undefined && !ENDPOINT.test(endpoint)))
    throw new TypeError(`Not an agent ref such as org/name@v2: ${JSON.stringify(ref)}`);
  return { text: `${org}/${agent}@${version}${endpoint ? `/${endpoint}` : ''}`, org, agent };
}

/** `pdf-reader` as `pdfReader`; a name starting with a digit gets an `agent` prefix. */
function camelCase(name: string): string {
  const camel = name.replace(/-+([a-z0-9])/g, (_, c: string) => c.toUpperCase()).replace(/-/g, '');
  const safe = /^[0-9]/.test(camel) ? `agent${camel[0]!.toUpperCase()}${camel.slice(1)}` : camel;
  return RESERVED.has(safe) ? `${safe}Agent` : safe;
}

/** The exported names a generated block declares (interfaces, types, enums). */
function declaredNames(code: string): Set<string> {
  return new Set(
    [...code.matchAll(/^export (?:declare )?(?:interface|type|(?:const )?enum) ([A-Za-z0-9_$]+)/gm)].map(
      (m) => m[1]!,
    ),
  );
}

/**
 * The TypeScript of one schema: its root named `rootName`, every named part of it prefixed with
 * it (`SummariseInputItem`), so the input's and the output's definitions never collide.
 */
async function typesOf(schema: unknown, rootName: string): Promise<string> {
  const code = await compile(safeSchema(schema) as Parameters<typeof compile>[0], rootName, {
    bannerComment: '',
    // Belt and braces with safeSchema: never read a file or a URL named by a schema.
    $refOptions: { resolve: { external: false } },
    customName: (s, keyName) => {
      const own = (typeof s.title === 'string' && s.title) || (typeof s.$id === 'string' && s.$id) || keyName;
      if (!own) return undefined;
      return own === rootName ? rootName : `${rootName} ${own}`;
    },
  });
  if (!declaredNames(code).has(rootName)) throw new Error(`The generated types do not declare ${rootName}`);
  return code.trim();
}

/**
 * The module for one agent version: `<Name>Input`, `<Name>Output` (and their named parts) and
 * `export const <name>: AgentRef<<Name>Input, <Name>Output>`. Its only import is a type import,
 * so the module costs nothing at run time.
 */
export async function agentTypes(agent: AgentSchemas, options: AgentTypesOptions = {}): Promise<string> {
  const ref = canonicalRef(agent.ref);
  const name = options.name ?? camelCase(ref.agent);
  if (!IDENTIFIER.test(name) || RESERVED.has(name))
    throw new TypeError(`Not a name a module can export: ${JSON.stringify(name)}`);
  const typeName = name[0]!.toUpperCase() + name.slice(1);
  const input = await typesOf(agent.input_schema, `${typeName}Input`);
  const output = await typesOf(agent.output_schema, `${typeName}Output`);
  const shared = [...declaredNames(input)].filter((n) => declaredNames(output).has(n));
  if (shared.length > 0)
    throw new Error(
      `${ref.text}: the input and output schemas both declare ${shared.join(', ')}; give the recursive ` +
        'sub-schemas titles so their types get distinct names',
    );
  return `/**
 * ${ref.text}: its input and output types, from its input_schema and output_schema.
 * Generated by \`agenthost-sdk types ${ref.text}\` (json-schema-to-typescript);
 * regenerate it, rather than edit it, to move to another version.
 */
import type { AgentRef } from ${JSON.stringify(options.sdkImport ?? '@agenthost/sdk')};

${input}

${output}

/** ${ref.text} with its types: \`client.agents.call(${name}, input)\`. */
export const ${name}: AgentRef<${typeName}Input, ${typeName}Output> = { ref: ${JSON.stringify(ref.text)} };
`;
}

/** The file name the command writes for a ref: `acme-summarise.ts`. */
export function agentTypesFileName(ref: string): string {
  const { org, agent } = canonicalRef(ref);
  return `${org}-${agent}.ts`;
}

/**
 * An agent version's schemas: from the public directory, else (a private agent) from the
 * caller's own agents, which needs the client's API key.
 */
export async function fetchAgentSchemas(client: AgentHostClient, ref: string): Promise<AgentSchemas> {
  const { org, agent, version } = parseAgentRef(ref);
  try {
    const details = await client.public.get(org, agent, version);
    return { ref, input_schema: details.input_schema, output_schema: details.output_schema };
  } catch (err) {
    if (!(err instanceof AgentHostError && err.status === 404)) throw err;
  }
  try {
    for await (const a of client.agents.iterate({ name: agent })) {
      if (a.org === org && a.version === version)
        return { ref, input_schema: a.input_schema ?? null, output_schema: a.output_schema ?? null };
    }
  } catch (err) {
    if (err instanceof AgentHostError && err.status === 401)
      throw new Error(`${ref} is not in the public directory; an API key is needed to read your own agents`);
    throw err;
  }
  throw new Error(`${ref}: no such public agent version, nor one of your own`);
}
