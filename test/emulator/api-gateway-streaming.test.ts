import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Route } from '../../functions/emulator/api-gateway-definition.ts';
import { answerStreamed, type StreamingInvoke } from '../../functions/emulator/api-gateway-streaming.ts';

/**
 * The emulated API Gateway's streamed integrations, against a stand-in for the function: the
 * client's answer ends when the function ends its response stream, not when its invocation ends (a
 * Lambda's work after its answer, such as a run answered 202: docs/runs.md), and the integration's
 * timeout still ends an answer the function never finishes.
 */

const PRELUDE = Buffer.from(JSON.stringify({ statusCode: 202, headers: { 'content-type': 'text/plain' } }));
const DELIMITER = Buffer.alloc(8);

describe('emulated API Gateway: streamed integrations', () => {
  let server: Server;
  let url: string;
  let invoke: StreamingInvoke;
  let failures: string[] = [];
  const route: Route = {
    path: '/x',
    segments: ['x'],
    method: 'GET',
    functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:x',
    timeoutMs: 1_000,
    streaming: true,
  };

  before(async () => {
    server = createServer((_req, res) => {
      void answerStreamed(
        res,
        route,
        {},
        'req-1',
        (...args) => invoke(...args),
        (type, why) => {
          failures.push(`${type}: ${why}`);
          res.writeHead(type === 'INTEGRATION_TIMEOUT' ? 504 : 502).end();
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('ends the client’s answer when the function ends its stream, while the invocation goes on', async () => {
    failures = [];
    let invocationEnded = false;
    let finish!: () => void;
    invoke = async (_arn, _event, _id, stream) => {
      stream.onChunk(Buffer.concat([PRELUDE, DELIMITER, Buffer.from('accepted')]));
      stream.onEnd?.();
      // Work after the answer: longer than the integration's timeout, which no longer applies.
      await new Promise<void>((resolve) => {
        finish = resolve;
      });
      invocationEnded = true;
      return null;
    };
    const res = await fetch(url);
    assert.equal(res.status, 202);
    assert.equal(await res.text(), 'accepted');
    assert.equal(invocationEnded, false, 'the answer was whole before the invocation ended');
    await new Promise((resolve) => setTimeout(resolve, route.timeoutMs + 200));
    finish();
    assert.deepEqual(failures, []);
  });

  it('still answers 504 for a function that never begins its answer within the integration’s timeout', async () => {
    failures = [];
    invoke = () => new Promise(() => undefined);
    const res = await fetch(url);
    assert.equal(res.status, 504);
    assert.deepEqual(failures, ['INTEGRATION_TIMEOUT: Endpoint request timed out']);
  });
});
