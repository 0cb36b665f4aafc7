import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createClient } from '../../sdk/src/client.ts';

/**
 * The SDK passes a sandboxed run's TRACEPARENT on with its calls (docs/traces.md, "Sub-calls"), so
 * an orchestrator's code that calls through the SDK hangs its sub-calls under its run; an explicit
 * `traceparent` option wins. Requests go to a recording fetch, never to a network.
 */
describe('the SDK’s traceparent', () => {
  const saved = process.env.TRACEPARENT;
  afterEach(() => {
    if (saved === undefined) delete process.env.TRACEPARENT;
    else process.env.TRACEPARENT = saved;
  });

  const sentHeader = async (options: { traceparent?: string } = {}) => {
    let header: string | null = 'unsent';
    const client = createClient({
      baseUrl: 'http://127.0.0.1:9',
      retry: false,
      fetch: async (request) => {
        header = request.headers.get('traceparent');
        return Response.json({
          data: {},
          warnings: [],
          metadata: { request_id: 'req_1', processing_time_ms: 1, version: 'v1' },
        });
      },
    });
    await client.agents.call('acme/echo@v1', {}, options);
    return header;
  };

  it('sends the run’s TRACEPARENT, an explicit one instead, and none outside a run', async () => {
    const run = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`;
    const own = `00-${'3'.repeat(32)}-${'4'.repeat(16)}-01`;
    delete process.env.TRACEPARENT;
    assert.equal(await sentHeader(), null);
    process.env.TRACEPARENT = run;
    assert.equal(await sentHeader(), run);
    assert.equal(await sentHeader({ traceparent: own }), own);
  });
});
