/**
 * What every CLI command works with: where the platform is and which key and workspace to use
 * (flags, then AGENTHOST_* variables, then the profile in the config file, then the defaults), the
 * SDK client built from them, and the output streams. Commands never read process.env or write
 * to process.stdout themselves, so tests can run them in-process as well as as a subprocess.
 */
import { createClient } from '../../sdk/src/client.ts';
import { CLIENT_ENV } from '../shared/env-names.ts';
import { type CliConfigFile, configPath, type Profile, readConfigFile } from './cli-config.ts';
import { CliError, EXIT } from './cli-errors.ts';

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
      this.options.profile ??
      (this.io.env[CLIENT_ENV.profile] || undefined) ??
      (await this.configFile()).current ??
      'default'
    );
  }

  async resolve(): Promise<Resolved> {
    const profileName = await this.profileName();
    const profile: Partial<Profile> = (await this.configFile()).profiles[profileName] ?? {};
    if (this.options.profile && !(await this.configFile()).profiles[profileName])
      throw new CliError(
        `no profile named ${profileName} in ${this.configPath}`,
        EXIT.usage,
        'agenthost login --profile NAME',
      );
    // An empty variable counts as unset (`AGENTHOST_API_KEY= agenthost …`).
    const env = (name: string) => this.io.env[name] || undefined;
    return {
      profileName,
      url: (this.options.url ?? env(CLIENT_ENV.url) ?? profile.url ?? DEFAULT_URL).replace(/\/+$/, ''),
      apiKey: this.options.apiKey ?? env(CLIENT_ENV.apiKey) ?? profile.api_key,
      workspace: this.options.workspace ?? env(CLIENT_ENV.workspace) ?? profile.workspace,
    };
  }

  /** The SDK client; `requireKey` (the default) fails early, with the fix, when there is no key. */
  async client(options: { requireKey?: boolean } = {}): Promise<Client> {
    const r = await this.resolve();
    if (options.requireKey !== false && !r.apiKey)
      throw new CliError(
        'no API key',
        EXIT.auth,
        'sign in with `agenthost login`, or set AGENTHOST_API_KEY or --api-key',
      );
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

  out(text: string): void {
    this.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Progress, warnings and notes go to stderr, so stdout stays the data (and --json one document). */
  note(text: string): void {
    this.io.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  }
}
