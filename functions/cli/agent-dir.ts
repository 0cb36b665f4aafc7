/**
 * An agent's directory as `agenthost publish` and `agenthost run` read it: the publish body (agent.json, or SKILL.md for a
 * skill, the shapes `agenthost publish` sends) and the code bundle packed as publish packs it
 * (bundle.exclude and bundle.include applied, agent.json left out), so a local run runs the same
 * files the platform would.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CallOptions } from '../../sdk/src/call.ts';
import type { JsonBody } from '../../sdk/src/operation-types.ts';
import { CliError, EXIT } from './cli-errors.ts';
import { type PackResult, packDirectory } from './pack.ts';

/** The publish body as the SDK types it: a directory's is sent as written, and the platform checks it. */
export type PublishBody = JsonBody<'publishAgent'>;

/** The model provider as the SDK types it: --provider is sent as given, and the platform checks it. */
export type Provider = NonNullable<CallOptions['provider']>;

export type AgentDir =
  | { kind: 'agent'; body: Record<string, unknown> }
  | { kind: 'skill'; body: { type: 'skill'; skill_md: string } };

export async function readAgentDir(dir: string): Promise<AgentDir> {
  const manifestPath = join(dir, 'agent.json');
  const manifestText = await readFile(manifestPath, 'utf8').catch(() => undefined);
  if (manifestText !== undefined) {
    let body: unknown;
    try {
      body = JSON.parse(manifestText);
    } catch (err) {
      throw new CliError(`${manifestPath} is not valid JSON: ${(err as Error).message}`, EXIT.usage);
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new CliError(`${manifestPath} must hold a JSON object`, EXIT.usage);
    return { kind: 'agent', body: body as Record<string, unknown> };
  }
  const skillText = await readFile(join(dir, 'SKILL.md'), 'utf8').catch(() => undefined);
  if (skillText !== undefined) return { kind: 'skill', body: { type: 'skill', skill_md: skillText } };
  throw new CliError(
    `${dir} has neither agent.json nor SKILL.md`,
    EXIT.usage,
    'create one with `agenthost init`',
  );
}

/**
 * The bundle of a code-runtime or managed-loop agent, packed as `agenthost publish` packs it; none
 * for a managed-loop agent that is its manifest alone (as publish allows).
 */
export async function packAgentBundle(
  dir: string,
  manifest: { execution_engine: string; bundle?: { exclude?: string[]; include?: string[] } | undefined },
): Promise<PackResult | undefined> {
  if (manifest.execution_engine !== 'code_runtime' && manifest.execution_engine !== 'managed_loop')
    return undefined;
  try {
    return await packDirectory(dir, {
      exclude: ['agent.json', ...(manifest.bundle?.exclude ?? [])],
      include: manifest.bundle?.include ?? [],
    });
  } catch (err) {
    const message = (err as Error).message;
    if (manifest.execution_engine === 'managed_loop' && /Nothing to pack/.test(message)) return undefined;
    throw new CliError(`packing ${dir} failed: ${message}`, EXIT.usage);
  }
}
