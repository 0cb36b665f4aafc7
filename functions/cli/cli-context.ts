/**
 * What every CLI command works with: where the platform is and which key and workspace to use
 * (flags, then AGENTHOST_* variables, then the profile in the config file, then the defaults), the
 * SDK client built from them, and the output streams. Commands never read the process's environment or write
 * to process.stdout themselves, so tests can run them in-process as well as as a subprocess.
 */
import { createClient } from '../../sdk/src/client.ts';
import { CLIENT_ENV } from '../shared/env-names.ts';
import { type CliConfigFile, configPath, type Profile, readConfigFile } from './cli-config.ts';
import { CliError, EXIT } from './cli-errors.ts';
import { signInHint } from './owner-key-hint.ts';
import { escapeControlsKeepingLayout } from './terminal-text.ts';

export const DEFAULT_URL = 'http://127.0.0.1:8787';

/** The options every command accepts (program-level). */
export interface GlobalOptions {
  profile?: string;
  url?: string;
  apiKey?: string;
  workspace?: string;
  json?: boolean;
  debug?: boolean;
}

export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

export interface Resolved {
  profileName: string;
  url: string;
  apiKey: string | undefined;
  workspace: string | undefined;
}

export type Client = ReturnType<typeof createClient>;

export class CliContext {
  private file: CliConfigFile | undefined;
  readonly io: CliIo;
  readonly options: GlobalOptions;

  constructor(io: CliIo, options: GlobalOptions) {
    this.io = io;
    this.options = options;
  }

  get json(): boolean {
    return this.options.json === true;
  }

  get configPath(): string {
    return configPath(this.io.env);
  }

  async configFile(): Promise<CliConfigFile> {
    this.file ??= await readConfigFile(this.configPath);
    return this.file;
  }

  /** The profile's name: --profile, AGENTHOST_PROFILE, the file's current one, else "default". */
  async profileName(): Promise<string> {
    return (
      nonEmpty(this.options.profile) ??
      nonEmpty(this.io.env[CLIENT_ENV.profile]) ??
      (await this.configFile()).current ??
      'default'
    );
  }

  async resolve(): Promise<Resolved> {
    const profileName = await this.profileName();
    const file = await this.configFile();
    const named = nonEmpty(this.options.profile) ?? nonEmpty(this.io.env[CLIENT_ENV.profile]);
    // A profile named on purpose (flag or variable) must exist: a typo must not fall back to defaults.
    if (named && !Object.hasOwn(file.profiles, named))
      throw new CliError(
        `no profile named ${named} in ${this.configPath}`,
        EXIT.usage,
        `sign in to it: agenthost login --profile ${named}`,
      );
    const profile: Partial<Profile> = Object.hasOwn(file.profiles, profileName)
      ? (file.profiles[profileName] ?? {})
      : {};
    const env = (name: string) => nonEmpty(this.io.env[name]);
    const url = checkUrl(nonEmpty(this.options.url) ?? env(CLIENT_ENV.url) ?? profile.url ?? DEFAULT_URL);
    // The profile's key goes only to the profile's own URL: a stray AGENTHOST_URL or --url must not
    // receive the key saved for another platform.
    const profileKey =
      profile.api_key && profile.url && sameOrigin(profile.url, url) ? profile.api_key : undefined;
    return {
      profileName,
      url,
      apiKey: nonEmpty(this.options.apiKey) ?? env(CLIENT_ENV.apiKey) ?? profileKey,
      workspace: nonEmpty(this.options.workspace) ?? env(CLIENT_ENV.workspace) ?? profile.workspace,
    };
  }

  /** The SDK client; `requireKey` (the default) fails early, with the fix, when there is no key. */
  async client(options: { requireKey?: boolean } = {}): Promise<Client> {
    const r = await this.resolve();
    if (options.requireKey !== false && !r.apiKey)
      throw new CliError(`no API key for ${r.url}`, EXIT.auth, signInHint(this.io.env, r.url));
    if (r.apiKey) checkApiKey(r.apiKey);
    return createClient({ baseUrl: r.url, ...(r.apiKey ? { apiKey: r.apiKey } : {}), retry: false });
  }

  /**
   * The workspace a workspace-scoped command acts in: --workspace, AGENTHOST_WORKSPACE, the
   * profile's default, else the caller's personal workspace.
   */
  async workspace(client: Client): Promise<string> {
    const chosen = (await this.resolve()).workspace;
    if (chosen) return chosen;
    const { workspaces } = await client.workspaces.list();
    const personal = workspaces.find((w) => w.personal) ?? workspaces[0];
    if (!personal)
      throw new CliError('the account has no workspace', EXIT.usage, 'agenthost workspaces create NAME');
    return personal.id;
  }

  /**
   * Data on stdout. Whatever a command composed, no control character but its own newlines and
   * tabs reaches the terminal (terminal-text.ts): the platform's strings are in most lines.
   */
  out(text: string): void {
    const safe = escapeControlsKeepingLayout(text);
    this.io.stdout.write(safe.endsWith('\n') ? safe : `${safe}\n`);
  }

  /** Text on stdout as it comes (a streamed answer), safe as `out` makes it, with no newline added. */
  write(text: string): void {
    this.io.stdout.write(escapeControlsKeepingLayout(text));
  }

  /** Progress, warnings and notes go to stderr, so stdout stays the data (and --json one document). */
  note(text: string): void {
    const safe = escapeControlsKeepingLayout(text);
    this.io.stderr.write(safe.endsWith('\n') ? safe : `${safe}\n`);
  }
}

/** An empty value counts as unset (`AGENTHOST_API_KEY= agenthost …`, `--api-key ""`). */
function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/** The platform URL, checked: http or https, no credentials in it (they would show in errors). */
export function checkUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError(`not a URL: ${text}`, EXIT.usage, 'write it whole, such as http://127.0.0.1:8787');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError(`the platform URL must be http or https: ${text}`, EXIT.usage);
  if (url.username || url.password)
    throw new CliError('the platform URL must not hold a user or password', EXIT.usage, 'use an API key');
  return text.replace(/\/+$/, '');
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

/**
 * An API key as the platform issues them (`ahk_` and base64url): anything else (a second line of a
 * key file, two pasted keys) is refused before it is sent, without being echoed.
 */
export function checkApiKey(key: string): void {
  if (!/^ahk_[A-Za-z0-9_-]{1,200}$/.test(key))
    throw new CliError(
      'the API key is not one agenthost issues (ahk_ followed by letters, digits, - and _)',
      EXIT.usage,
      'check for a newline or a second key in what you pasted or piped',
    );
}
