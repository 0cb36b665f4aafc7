import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AgentHostError, createClient } from '../../sdk/src/index.ts';

/** A loopback server answering from a script of (status, envelope, headers), speaking the real envelope. */
type Answer = { status: number; body: unknown; headers?: Record<string, string> };
const envelope = (code: string, is_retryable: boolean, extra: Record<string, unknown> = {}) => ({
  error: { code, message: code.toLowerCase(), is_retryable, ...extra },
  metadata: { request_id: 'req_test' },
});
const tasksPage = { tasks: [], total: 0, metadata: { request_id: 'req_ok' } };

describe('SDK retries (loopback server speaking the error envelope)', () => {
  let server: Server;
  let url: string;
  let script: Answer[] = [];
  let arrivals: { at: number; body: string }[] = [];

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        arrivals.push({ at: Date.now(), body });
        const next = script.shift() ?? { status: 200, body: tasksPage };
        res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
        res.end(JSON.stringify(next.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    script = [];
    arrivals = [];
  });

  it('waits suggested_wait_time after a 429, then succeeds', async () => {
    script = [{ status: 429, body: envelope('RATE_LIMITED', true, { suggested_wait_time: 1 }) }];
    const client = createClient({ baseUrl: url, apiKey: 'ahk_test' });
    const page = await client.tasks.list();
    assert.deepEqual(page.tasks, []);
    assert.equal(arrivals.length, 2);
    const waited = arrivals[1]!.at - arrivals[0]!.at;
    assert.ok(waited >= 950, `waited ${waited} ms for suggested_wait_time 1 s`);
  });

  it('honours Retry-After when the envelope suggests no wait, and resends the body', async () => {
    script = [{ status: 503, body: envelope('INTERNAL_ERROR', true), headers: { 'retry-after': '0' } }];
    const client = createClient({ baseUrl: url, apiKey: 'ahk_test' });
    script.push({ status: 201, body: { id: 't1', title: 'x', metadata: { request_id: 'r' } } });
    await client.tasks.create({ title: 'x' });
    assert.equal(arrivals.length, 2);
    assert.deepEqual(JSON.parse(arrivals[1]!.body), { title: 'x' });
  });

  it('gives up after maxAttempts, and throws the last error', async () => {
    script = Array.from({ length: 5 }, () => ({ status: 502, body: envelope('LLM_ERROR', true) }));
    const client = createClient({ baseUrl: url, retry: { maxAttempts: 3, baseDelayMs: 1 } });
    await assert.rejects(client.tasks.list(), (err: AgentHostError) => {
      assert.ok(err instanceof AgentHostError);
      assert.equal(err.code, 'LLM_ERROR');
      assert.equal(err.status, 502);
      assert.equal(err.requestId, 'req_test');
      return true;
    });
    assert.equal(arrivals.length, 3);
  });

  it('never retries errors that are not retryable, nor waits longer than maxWaitMs', async () => {
    script = [{ status: 400, body: envelope('INVALID_INPUT', false) }];
    const client = createClient({ baseUrl: url, retry: { baseDelayMs: 1 } });
    await assert.rejects(client.tasks.list(), { code: 'INVALID_INPUT' });
    assert.equal(arrivals.length, 1);

    arrivals = [];
    script = [{ status: 429, body: envelope('RATE_LIMITED', true, { suggested_wait_time: 3600 }) }];
    await assert.rejects(client.tasks.list(), { code: 'RATE_LIMITED', suggestedWaitTime: 3600 });
    assert.equal(arrivals.length, 1, 'a quota that resets in an hour is not waited for');

    arrivals = [];
    script = [{ status: 504, body: envelope('TIMEOUT', true) }];
    const noRetry = createClient({ baseUrl: url, retry: false });
    await assert.rejects(noRetry.tasks.list(), { code: 'TIMEOUT' });
    assert.equal(arrivals.length, 1);
  });
});
