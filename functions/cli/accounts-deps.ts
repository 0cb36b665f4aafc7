import { readEndpointsFile } from '../emulator/emulated-endpoints.ts';
import type { Config } from '../platform/config.ts';
import { createDeps, type Deps } from '../platform/deps.ts';

/**
 * The platform's dependencies for the account commands (`agenthost accounts create`): the data
 * dir's SQLite store; while an emulated AWS deployment runs on the same data dir (npm run
 * start:emulated), its DynamoDB table; in AWS mode, the table PLATFORM_TABLE_NAME names.
 */
export async function accountsDeps(config: Config): Promise<Deps> {
  if (config.mode === 'local') {
    const emulated = readEndpointsFile(config.dataDir);
    if (emulated) {
      const { emulatedTableDeps } = await import('../emulator/emulated-table-deps.ts');
      return emulatedTableDeps(config, emulated);
    }
  }
  return createDeps(config);
}
