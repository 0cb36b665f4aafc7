/**
 * The platform `agenthost run` runs an agent on: the local composition (createDeps in local mode,
 * the owner bootstrapped) on a temporary data dir, served on a loopback port of this process and
 * removed afterwards. Running through it (publish, upload, secrets, call, deploy over its own API)
 * gives a local run exactly the platform's behaviour, with nothing of it re-implemented.
 *
 * Only the settings that shape a run come from the environment: the model providers' keys, base
 * URLs and default models (as the platform reads them), the local sandbox kind, its host ports and
 * the service timings. Nothing else of an operator's environment (PLATFORM_MODE=aws, a data dir, a
 * table) can point a local run at real data.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../../sdk/src/client.ts';
import { generateApiKey } from '../core/api-keys/api-key-secret.ts';
import { LocalServer } from '../local-platform/local-server.ts';
import { bootstrapOwner } from '../platform/bootstrap.ts';
import { ConfigError, parseConfig } from '../platform/config.ts';
import { createDeps, type Deps } from '../platform/deps.ts';
import { PROVIDER_SECRET_SETTINGS } from '../ports/config.ts';
import { ENV, type Setting } from '../shared/env-names.ts';
import { createLogger, type LogLevel } from '../shared/logger.ts';
import type { Client } from './cli-context.ts';
import { CliError, EXIT } from './cli-errors.ts';

const FROM_ENVIRONMENT: Setting[] = [
  // The model providers' keys and URLs (what the provider-keys secret holds on AWS), their models.
  ...PROVIDER_SECRET_SETTINGS,
  'anthropicDefaultModel',
  'openaiDefaultModel',
  'googleDefaultModel',
  'ollamaDefaultModel',
  'sandboxHostPorts',
  'serviceBackoffMs',
  'serviceHealthyMs',
  'serviceStartTimeoutMs',
];

export interface InProcessPlatform {
  url: string;
  client: Client;
  deps: Deps;
  close(): Promise<void>;
}

export async function startInProcessPlatform(
  env: NodeJS.ProcessEnv,
  log: { level: LogLevel; write: (line: string) => void },
): Promise<InProcessPlatform> {
  const settings: Record<string, string | undefined> = {};
  for (const setting of FROM_ENVIRONMENT) settings[ENV[setting]] = env[ENV[setting]];
  // Bubblewrap unless the environment asks for unisolated runs; never ECS.
  if (env[ENV.sandbox] === 'unisolated') settings[ENV.sandbox] = 'unisolated';
  const dataDir = await mkdtemp(join(tmpdir(), 'agenthost-run-'));
  const ownerKey = generateApiKey();
  let deps: Deps | undefined;
  let server: LocalServer | undefined;
  const close = async () => {
    await server?.close();
    if (deps) {
      await deps.serviceRunner.close();
      await deps.notifier.drain();
      await deps.store.close();
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    let config: ReturnType<typeof parseConfig>;
    try {
      config = parseConfig({
        ...settings,
        [ENV.mode]: 'local',
        [ENV.dataDir]: dataDir,
        [ENV.host]: '127.0.0.1',
        [ENV.port]: '0',
        [ENV.bootstrapApiKey]: ownerKey,
        [ENV.logLevel]: log.level,
      });
    } catch (err) {
      if (err instanceof ConfigError) throw new CliError(err.message, EXIT.usage);
      throw err;
    }
    deps = await createDeps(config, { logger: createLogger(log.level, log.write) });
    await bootstrapOwner(deps);
    server = new LocalServer(deps);
    const url = await server.listen(0, '127.0.0.1');
    return {
      url,
      client: createClient({ baseUrl: url, apiKey: ownerKey, retry: false }),
      deps,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
