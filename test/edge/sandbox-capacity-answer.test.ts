import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { capacityError } from '../../functions/adapters/aws/ecs-sandbox-warm.ts';
import { answeringCapacity } from '../../functions/core/calls/sandbox-capacity.ts';
import { errorAnswer } from '../../functions/edge/error-mapping.ts';
import type { SandboxSession } from '../../functions/ports/sandbox.ts';

/**
 * A run for which no sandbox could start in time (past the platform's ceiling
 * of sandboxes or its cloud account's Fargate quota) answers 503 SERVICE_UNAVAILABLE with
 * Retry-After and a message naming the cause, never a 500: the session's error as the ECS adapter
 * raises it, through the run's session as core opens it, to the answer the edge builds.
 */

const refusing = (err: Error): SandboxSession => ({
  workDir: '/work',
  exec: async () => {
    throw err;
  },
  readFile: async () => {
    throw err;
  },
  writeFile: async () => {
    throw err;
  },
  listFiles: async () => {
    throw err;
  },
  close: async () => undefined,
});

async function answerOf(reason: 'ceiling' | 'quota') {
  const session = answeringCapacity(refusing(capacityError(reason, 10)));
  const err = await session.exec('true').then(
    () => assert.fail('the exec should fail'),
    (e: unknown) => e,
  );
  const res = await errorAnswer(
    {
      requestId: 'req-1',
      origin: undefined,
      auth: undefined,
      addressAdmission: undefined,
      allow: undefined,
      route: undefined,
    },
    err,
    {
      method: 'POST',
      path: '/acme/tool/v1/run',
    },
  );
  return { res, body: (await res.json()) as { error: Record<string, unknown> } };
}

describe('no sandbox in time: 503 with Retry-After, never 500', () => {
  test('the ceiling: 503, Retry-After 5, the cause named', async () => {
    const { res, body } = await answerOf('ceiling');
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '5');
    assert.equal(body.error.code, 'SERVICE_UNAVAILABLE');
    assert.equal(body.error.is_retryable, true);
    assert.equal(body.error.suggested_wait_time, 5);
    assert.match(String(body.error.message), /All 10 sandboxes this platform may run at once are busy/);
  });

  test("the account's quota: 503, Retry-After 15, the quota named", async () => {
    const { res, body } = await answerOf('quota');
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '15');
    assert.match(String(body.error.message), /Fargate vCPU quota/);
  });

  test('every session operation answers so, and any other error goes on as it was', async () => {
    const session = answeringCapacity(refusing(capacityError('quota')));
    for (const op of [
      () => session.readFile('a'),
      () => session.writeFile('a', 'b'),
      () => session.listFiles(),
    ]) {
      await assert.rejects(op(), { name: 'PlatformError', code: 'SERVICE_UNAVAILABLE' });
    }
    const other = answeringCapacity(refusing(new TypeError('boom')));
    await assert.rejects(other.exec('true'), TypeError);
  });
});
