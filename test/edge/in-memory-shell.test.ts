import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FetchHandler } from '../../functions/edge/edge-context.ts';
import { inMemoryShell } from '../../functions/local-platform/in-memory-shell.ts';
import { createLogger } from '../../functions/shared/logger.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/*
 * The app in memory (functions/local-platform/in-memory-shell.ts): the answer a socket gets, with
 * no socket; and the shells' contract kept (a request id each, waitUntil's work seen through
 * before the answer, onDelivered's once the body is read).
 */

const logger = createLogger('silent');

describe('the app in memory', () => {
  let socket: TestPlatform;
  let memory: TestPlatform;
  before(async () => {
    socket = await startTestPlatform();
    memory = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
  });
  after(async () => {
    await socket?.close();
    await memory?.close();
  });

  it('answers as the server does, with no server opened', async () => {
    const created = { title: 'Write the report' };
    const overSocket = await socket.request('POST', '/tasks', { body: created });
    const inMemory = await memory.request('POST', '/tasks', { body: created });
    assert.equal(inMemory.status, 201);
    assert.equal(inMemory.status, overSocket.status);
    assert.deepEqual(Object.keys(inMemory.body).sort(), Object.keys(overSocket.body).sort());
    for (const name of ['content-type', 'cache-control', 'x-ratelimit-limit', 'x-ratelimit-remaining']) {
      assert.equal(inMemory.headers.get(name), overSocket.headers.get(name), name);
    }
    assert.match(inMemory.headers.get('x-request-id') ?? '', /^req_/);
    const refused = await memory.request('GET', '/tasks', { key: 'ak_nope' });
    assert.equal(refused.status, 401);
    assert.equal(memory.url.startsWith('http://127.0.0.1'), false, 'no loopback port was taken');
  });

  it('mints a request id per request', async () => {
    const a = await memory.request('GET', '/health', { key: null });
    const b = await memory.request('GET', '/health', { key: null });
    assert.notEqual(a.headers.get('x-request-id'), b.headers.get('x-request-id'));
  });

  it('sees waitUntil through before answering, and runs onDelivered once the body is read', async () => {
    const steps: string[] = [];
    const app: FetchHandler = async (_request, context, afterAnswer) => {
      assert.equal(context.address, '127.0.0.1');
      afterAnswer.waitUntil(
        new Promise<void>((resolve) => setImmediate(() => resolve(void steps.push('waited')))),
      );
      afterAnswer.onDelivered?.(async () => void steps.push('delivered'));
      return new Response(
        new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode('hi'));
            c.close();
          },
        }),
      );
    };
    const send = inMemoryShell(app, { base: 'http://agenthost.test', logger });
    const response = await send('/anything');
    assert.deepEqual(steps, ['waited']);
    assert.equal(await response.text(), 'hi');
    assert.deepEqual(steps, ['waited', 'delivered']);
  });

  it('runs onDelivered when the reader cancels, and at once for an answer without a body', async () => {
    const steps: string[] = [];
    const app: FetchHandler = async (request, _context, afterAnswer) => {
      afterAnswer.onDelivered?.(async () => void steps.push(`delivered ${new URL(request.url).pathname}`));
      if (request.method === 'HEAD') return new Response(null, { status: 204 });
      return new Response(new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(8)) }));
    };
    const send = inMemoryShell(app, { base: 'http://agenthost.test', logger });
    await send('/empty', { method: 'HEAD' });
    assert.deepEqual(steps, ['delivered /empty']);
    const streamed = await send('/stream');
    await streamed.body?.cancel();
    assert.deepEqual(steps, ['delivered /empty', 'delivered /stream']);
  });
});

describe('a client that aborts, in memory', () => {
  it('cancels the answer’s body as a hang-up on a socket does, and runs onDelivered', async () => {
    const steps: string[] = [];
    const app: FetchHandler = async (_request, _context, afterAnswer) => {
      afterAnswer.onDelivered?.(async () => void steps.push('delivered'));
      return new Response(
        new ReadableStream({
          pull: (c) => c.enqueue(new Uint8Array(8)),
          cancel: () => void steps.push('cancelled'),
        }),
      );
    };
    const send = inMemoryShell(app, { base: 'http://agenthost.test', logger });
    const client = new AbortController();
    const response = await send('/stream', { signal: client.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    client.abort();
    await assert.rejects(reader.read());
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(steps.sort(), ['cancelled', 'delivered']);
  });
});
