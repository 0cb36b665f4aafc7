/**
 * The CLI's per-user configuration: named profiles of a platform URL, an API key and a default
 * workspace, in one JSON file readable by its owner only (mode 0600 in a 0700 directory), because
 * it holds API keys. `agenthost login` writes it; flags and AGENTHOST_* variables override it.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { CLIENT_ENV } from '../shared/env-names.ts';
import { CliError, EXIT } from './cli-errors.ts';

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
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { profiles: {} };
    throw new CliError(
      `cannot read the config file ${path}: ${code ?? (err as Error).message}`,
      EXIT.usage,
      FIX,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError(`the config file ${path} is not JSON`, EXIT.usage, FIX);
  }
  const file = parsed as Partial<CliConfigFile> | null;
  if (!isObject(file) || !isObject(file.profiles))
    throw new CliError(`the config file ${path} has no "profiles" object`, EXIT.usage, FIX);
  for (const [name, p] of Object.entries(file.profiles)) {
    const ok =
      isObject(p) &&
      typeof p.url === 'string' &&
      (p.api_key === undefined || typeof p.api_key === 'string') &&
      (p.workspace === undefined || typeof p.workspace === 'string');
    if (!ok)
      throw new CliError(
        `profile ${name} in ${path} needs a url string (and api_key, workspace strings if set)`,
        EXIT.usage,
        FIX,
      );
  }
  return {
    ...(typeof file.current === 'string' ? { current: file.current } : {}),
    profiles: file.profiles as Record<string, Profile>,
  };
}

const FIX = 'fix or delete it, then run agenthost login again';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Writes through a new temporary file (a random name, created exclusively, so nothing planted at
 * that path is followed) and a rename, so a crash never leaves half a file; 0600 in a 0700
 * directory (ours, even one that existed with looser modes).
 */
export async function writeConfigFile(path: string, config: CliConfigFile): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // Our own directory (…/agenthost) is tightened; a directory AGENTHOST_CONFIG chose is the user's.
  if (basename(dir) === 'agenthost') await chmod(dir, 0o700);
  const tmp = `${path}.${randomBytes(8).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    await chmod(tmp, 0o600);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
