/**
 * The CLI's per-user configuration: named profiles of a platform URL, an API key and a default
 * workspace, in one JSON file readable by its owner only (mode 0600 in a 0700 directory), because
 * it holds API keys. `agenthost login` writes it; flags and AGENTHOST_* variables override it.
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CLIENT_ENV } from '../shared/env-names.ts';

export interface Profile {
  url: string;
  api_key?: string;
  workspace?: string;
}

export interface CliConfigFile {
  /** The profile used when none is named (`login` sets it). */
  current?: string;
  profiles: Record<string, Profile>;
}

/** AGENTHOST_CONFIG, else $XDG_CONFIG_HOME/agenthost/config.json, else ~/.config/agenthost/config.json. */
export function configPath(env: NodeJS.ProcessEnv): string {
  const chosen = env[CLIENT_ENV.config];
  if (chosen) return chosen;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'agenthost', 'config.json');
}

export async function readConfigFile(path: string): Promise<CliConfigFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${path} is not JSON; fix or delete it, then run agenthost login again`);
  }
  const file = parsed as Partial<CliConfigFile>;
  if (
    typeof file !== 'object' ||
    file === null ||
    typeof file.profiles !== 'object' ||
    file.profiles === null
  )
    throw new Error(`${path} has no "profiles" object; fix or delete it, then run agenthost login again`);
  return { ...(typeof file.current === 'string' ? { current: file.current } : {}), profiles: file.profiles };
}

/** Writes through a temporary file and a rename, so a crash never leaves half a file; 0600 always. */
export async function writeConfigFile(path: string, config: CliConfigFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, path);
}
