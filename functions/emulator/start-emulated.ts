import type { Config } from '../platform/config.ts';
import { lockDataDir } from '../platform/data-dir-lock.ts';
import { ownerOnlyDataDir, tightenedLine } from '../platform/data-dir-permissions.ts';
import { emulatedAdminKeyFile, startEmulatedDeployment } from './emulated-deployment.ts';

/**
 * `npm run start:emulated`: the AWS deployment as synthesized, on this machine, until SIGINT or
 * SIGTERM. It reads the same settings as `npm start` (HOST, PORT, PLATFORM_DATA_DIR, the bootstrap
 * key and tier, the model provider variables) and prints the same first-start lines.
 */
export async function startEmulatedPlatform(config: Config): Promise<void> {
  if (config.mode !== 'local') {
    throw new Error(
      'start:emulated runs the AWS deployment on this machine by itself; leave PLATFORM_MODE unset',
    );
  }
  // One platform per data dir (data-dir-lock.ts), emulated or not; taken before DynamoDB Local starts.
  const lock = await lockDataDir(config.dataDir, 'emulated');
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const tightened = await ownerOnlyDataDir(config.dataDir);
  if (tightened > 0) out(tightenedLine(config.dataDir, tightened));
  const started = Date.now();
  const deployment = await startEmulatedDeployment(config, { progress: out });
  const { boot } = deployment;
  if (boot.created) {
    out(`Created the owner account (org "local", tier ${config.bootstrapTier}).`);
    if (boot.generatedKey) {
      out(`Owner API key (shown once; also written to ${emulatedAdminKeyFile(config.dataDir)}, mode 0600):`);
      out(`  ${boot.generatedKey}`);
    } else {
      out('Owner API key: the value of PLATFORM_BOOTSTRAP_API_KEY.');
    }
  }
  out(
    `agenthost (emulated AWS deployment) listening on ${deployment.url} (data in ${config.dataDir}, ` +
      `ready in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
  lock.listening(deployment.url);
  out(
    `Always-on services answer at http://<service>-<first 8 of the workspace id>.${deployment.servicesUrl.slice('http://'.length)}`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    out(`Received ${signal}; stopping.`);
    await deployment.close();
    lock.release();
    out('Stopped.');
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}
