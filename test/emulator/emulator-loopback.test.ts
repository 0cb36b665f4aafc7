import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startDynamoDbEngine } from '../../functions/emulator/dynamodb-local.ts';
import { isLoopback, listeningSocketsOf, processTree } from '../helpers/listening-sockets.ts';

/**
 * DynamoDB Local checks no credentials: whoever reaches its port owns every table (an attacker's
 * sandbox reached it on the host's own address and planted an API key). It must listen on
 * loopback only. The emulated deployment's other servers are checked in
 * test/e2e/emulated-open-doors.test.ts.
 */
describe('DynamoDB Local', () => {
  it('listens on loopback only', async () => {
    const engine = await startDynamoDbEngine();
    try {
      const pid = engine.process.pid as number;
      const sockets = listeningSocketsOf(processTree(pid));
      const port = Number(new URL(engine.endpoint).port);
      assert.ok(
        sockets.some((s) => s.port === port),
        `no listening socket on ${port}: ${JSON.stringify(sockets)}`,
      );
      assert.deepEqual(
        sockets.filter((s) => !isLoopback(s.address)),
        [],
      );
    } finally {
      await engine.close();
    }
  });
});
