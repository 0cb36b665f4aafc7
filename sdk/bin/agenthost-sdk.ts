#!/usr/bin/env node
/**
 * `agenthost-sdk`: the SDK's command line. `types` writes a module of typed refs for published
 * agents (src/agent-types.ts), from the platform at AGENTHOST_URL.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { agentTypes, agentTypesFileName, fetchAgentSchemas } from '../src/agent-types.ts';
import { createClient } from '../src/client.ts';

const USAGE = `agenthost-sdk: the agenthost SDK's command line

Usage:
  agenthost-sdk types REF... [--out DIR | --out FILE.ts] [--name NAME] [--sdk-import SPECIFIER]
      For each agent version REF (org/name@v2, optionally /endpoint), write a TypeScript module
      with its Input and Output types (from its input_schema and output_schema) and a typed ref:
      \`import { summarise } from './agents/acme-summarise.ts'; await client.agents.call(summarise, input)\`.
      --out: the directory (default .; files are named org-name.ts), or the file for one REF.
      --name: the exported ref's name, for one REF (default: the agent's name in camelCase).
      --sdk-import: where the module imports the AgentRef type from (default @agenthost/sdk).
      AGENTHOST_URL (default http://127.0.0.1:8787) is the platform; AGENTHOST_API_KEY is needed
      only for agents that are not in the public directory (your own private ones).`;

async function typesCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals: refs } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      out: { type: 'string', default: '.' },
      name: { type: 'string' },
      'sdk-import': { type: 'string' },
    },
  });
  const toFile = values.out.endsWith('.ts');
  if (refs.length === 0) throw new UsageError('types needs at least one agent ref (org/name@v2)');
  if (refs.length > 1 && (toFile || values.name))
    throw new UsageError('--out FILE.ts and --name need a single ref');
  const client = createClient({
    baseUrl: env.AGENTHOST_URL || 'http://127.0.0.1:8787',
    ...(env.AGENTHOST_API_KEY ? { apiKey: env.AGENTHOST_API_KEY } : {}),
  });
  for (const ref of refs) {
    const code = await agentTypes(await fetchAgentSchemas(client, ref), {
      ...(values.name ? { name: values.name } : {}),
      ...(values['sdk-import'] ? { sdkImport: values['sdk-import'] } : {}),
    });
    const file = resolve(toFile ? values.out : join(values.out, agentTypesFileName(ref)));
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, code);
    process.stdout.write(`wrote ${relative(process.cwd(), file) || file} (${ref})\n`);
  }
  return 0;
}

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'types') return typesCommand(rest, process.env);
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  throw new UsageError(`Unknown command: ${argv.join(' ')}`);
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (caught) {
  const err = caught as Error & { code?: unknown };
  if (err instanceof UsageError || String(err.code).startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${err.message}\n\n${USAGE}\n`);
    process.exitCode = 2;
  } else {
    // The platform's own message (AgentHostError) or the generator's, without a stack.
    process.stderr.write(`agenthost-sdk: ${err.message}\n`);
    process.exitCode = 1;
  }
}
