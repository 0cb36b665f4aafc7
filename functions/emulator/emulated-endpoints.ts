import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { processAlive } from '../shared/process-alive.ts';

/**
 * Where a running emulated deployment can be reached, written to <PLATFORM_DATA_DIR>/aws/endpoints.json
 * (mode 0600) while it runs, so `agenthost accounts create` with the same data dir writes to the
 * emulated table as it writes to the DynamoDB table of a real deployment.
 */
export interface EmulatedEndpoints {
  pid: number;
  apiUrl: string;
  region: string;
  tableName: string;
  dynamodbEndpoint: string;
  s3Endpoint: string;
  secretsManagerEndpoint: string;
  lambdaEndpoint: string;
  schedulerEndpoint: string;
  ecsEndpoint: string;
  /** The deployment's meter (meter-endpoint.ts): GET a snapshot, POST /reset. */
  meterEndpoint?: string;
}

const FILE = join('aws', 'endpoints.json');

export async function writeEndpointsFile(dataDir: string, endpoints: EmulatedEndpoints): Promise<void> {
  await writeFile(join(dataDir, FILE), `${JSON.stringify(endpoints, null, 2)}\n`, { mode: 0o600 });
}

/** Removed on a clean stop (only by the process that wrote it). */
export async function removeEndpointsFile(dataDir: string, pid: number): Promise<void> {
  if (readEndpointsFile(dataDir)?.pid === pid) await rm(join(dataDir, FILE), { force: true });
}

/** The endpoints of the emulated deployment running on `dataDir`, if one is running. */
export function readEndpointsFile(dataDir: string): EmulatedEndpoints | undefined {
  let parsed: EmulatedEndpoints;
  try {
    parsed = JSON.parse(readFileSync(join(dataDir, FILE), 'utf8')) as EmulatedEndpoints;
  } catch {
    return undefined;
  }
  return Number.isInteger(parsed.pid) && processAlive(parsed.pid) ? parsed : undefined;
}
