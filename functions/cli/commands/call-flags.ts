/** `agenthost call`'s flags, checked and turned into the SDK call's options (call.ts). */
import { stat } from 'node:fs/promises';
import type { Provider } from '../agent-dir.ts';
import { CliError, EXIT } from '../cli-errors.ts';

export interface CallFlags {
  input?: string;
  inputFile?: string;
  file?: string[];
  metadata?: string;
  provider?: Provider;
  model?: string;
  /** --skills' value, or false for --no-skills. */
  skills?: string | false;
  skillsOnly?: string;
  timeout?: number;
  tenant?: string;
  maxHops?: number;
  /** --stream (true), --no-stream (false), or neither: stream when stdout is a terminal. */
  stream?: boolean;
  /** Start the call as a run and print its id (docs/runs.md). */
  async?: boolean;
  webhook?: string;
}

export const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Refuses a --file that is missing or not a file before the call is sent. */
export async function checkFiles(paths: string[]): Promise<void> {
  for (const path of paths) {
    const st = await stat(path).catch((err: NodeJS.ErrnoException) => {
      throw new CliError(`cannot read --file ${path}: ${err.code ?? err.message}`, EXIT.usage);
    });
    if (!st.isFile()) throw new CliError(`--file ${path} is not a file`, EXIT.usage);
  }
}

/** The SDK call's options from the command's flags (only those given). */
export function callOptions(flags: CallFlags) {
  // commander's --no-skills makes `skills` false; a string is --skills' value.
  const skills = typeof flags.skills === 'string' ? flags.skills : undefined;
  const timeout = flags.timeout;
  return {
    ...(flags.file?.length ? { files: flags.file } : {}),
    ...(flags.provider ? { provider: flags.provider } : {}),
    ...(flags.model ? { model: flags.model } : {}),
    ...(skills ? { skills: splitList(skills) } : {}),
    ...(flags.skillsOnly ? { skillsOnly: splitList(flags.skillsOnly) } : {}),
    ...(flags.skills === false ? { noSkills: true } : {}),
    ...(timeout !== undefined ? { timeoutMs: Math.round(timeout * 1000) } : {}),
    ...(flags.tenant ? { tenant: flags.tenant } : {}),
    ...(flags.maxHops !== undefined ? { maxHops: flags.maxHops } : {}),
    ...(flags.webhook ? { webhook: flags.webhook } : {}),
  };
}

/** A comma-separated list's items, trimmed, empty ones left out. */
function splitList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
