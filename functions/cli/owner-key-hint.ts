/**
 * The sign-in hint (no key, a refused key) for a platform on this machine: `agenthost start`
 * writes its owner's key to `admin-api-key` in its data dir (`aws/admin-api-key` for the emulated
 * deployment), and a new user's first question is where that is. The data dir is the one this
 * environment gives the platform (PLATFORM_DATA_DIR, else ./.data, as config.ts resolves it), and
 * the file is named only when it is there and the CLI points at a loopback URL: a key file of this
 * machine says nothing about a remote platform.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ENV } from '../shared/env-names.ts';

// The platform's names (platform/bootstrap.ts, emulator/emulated-deployment.ts), not imported:
// those modules load the store and the emulator, a second on every CLI error.
// test/cli/cli-first-use.test.ts writes the files where those modules say, so a rename there fails it.
const ADMIN_KEY_FILE = 'admin-api-key';

export function signInHint(env: NodeJS.ProcessEnv, url: string | undefined): string {
  const file = url && isLoopback(url) ? ownerKeyFile(env) : undefined;
  return `sign in with \`agenthost login\`, or set AGENTHOST_API_KEY${file ? `; the owner key of the platform started with this data dir is in ${file}` : ''}`;
}

function ownerKeyFile(env: NodeJS.ProcessEnv): string | undefined {
  const dataDir = resolve(env[ENV.dataDir] || './.data');
  return [join(dataDir, ADMIN_KEY_FILE), join(dataDir, 'aws', ADMIN_KEY_FILE)].find((f) => existsSync(f));
}

function isLoopback(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
