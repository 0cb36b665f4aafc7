/**
 * `npm test`'s global setup (test/setup/run.ts passes it to node:test's run()): what every test file would otherwise start
 * for itself, started once for the run. Each test file runs in a process of its own, spawned after
 * this has run, and reads what it needs from the environment set here.
 *
 * - DynamoDB Local, in memory: each test process makes its own tables on it
 *   (test/helpers/dynamodb-local.ts), so files share the engine and never a table. A file run
 *   alone (`node --test test/<dir>/<file>.test.ts`) starts an engine of its own as before.
 * - The synthesized assembly every emulated deployment of the end-to-end tests runs from
 *   (test/helpers/deployment.ts): synthesized here once, before any test file's clock runs. Left
 *   to the first starts, each of the files starting at once synthesized its own copy (every
 *   Lambda bundled, a minute of two cores each), and under that load their set-up outran the
 *   test timeout.
 */

import { type DynamoDbEngine, startDynamoDbEngine } from '../../functions/emulator/dynamodb-local.ts';
import { EMULATED_CONTEXT } from '../../functions/emulator/emulated-deployment.ts';
import { synthesize } from '../../functions/emulator/synthesized-deployment.ts';
import { SHARED_ASSEMBLY } from '../helpers/deployment.ts';
import { SHARED_DYNAMODB_ENDPOINT } from '../helpers/dynamodb-local.ts';

let engine: DynamoDbEngine | undefined;

export async function globalSetup(): Promise<void> {
  const [started] = await Promise.all([
    startDynamoDbEngine(),
    synthesize(SHARED_ASSEMBLY, EMULATED_CONTEXT, (line) => process.stdout.write(`global setup: ${line}\n`)),
  ]);
  engine = started;
  process.env[SHARED_DYNAMODB_ENDPOINT] = engine.endpoint;
}

export async function globalTeardown(): Promise<void> {
  await engine?.close();
}
