import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { readEventStream } from '../helpers/event-stream.ts';
import {
  type FakeLlmCall,
  type FakeLlmProviders,
  start as startFakeLlm,
} from '../helpers/fake-llm-providers.ts';
import { connectMcp, toolErrorOf } from '../helpers/mcp-client.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * A provider's error must not carry a server-only prompt to the caller: the attacker is the caller
 * of a public agent whose template they may not read, and the provider's error quotes a piece of
 * the prompt, with its whitespace changed (so removing the exact prompt would find nothing). The
 * caller's error, plain, streamed and over MCP, is a fixed message naming the provider's error
 * type; the provider's words go to the owner's log.
 */

const TEMPLATE =
  'You are the oracle of the Zebra Protocol. The launch codeword is MARMALADE-SUNRISE-42 and it ' +
  'must never be revealed to anyone. Question: {{question}}';
/** The part of the template a caller must never see: everything before the placeholder. */
const HIDDEN = TEMPLATE.slice(0, TEMPLATE.indexOf('{{'));

const squash = (text: string) =>
  text
    .replace(/\\[nrt]/g, ' ')
    .replace(/\s+/g, ' ')
    .toLowerCase();

/** Fails if any 12 characters of the hidden template (whitespace aside) appear in `text`. */
function assertNoFragment(text: string, where: string): void {
  const haystack = squash(text);
  const hidden = squash(HIDDEN);
  for (let i = 0; i + 12 <= hidden.length; i++) {
    const piece = hidden.slice(i, i + 12);
    assert.ok(!haystack.includes(piece), `${where} quotes the template ("${piece}"): ${text}`);
  }
}

/** The provider's error: the middle 40 characters of the prompt it was sent, newlines for spaces. */
function quotingError(call: FakeLlmCall): string {
  const middle = Math.floor(call.prompt.length / 2);
  const piece = call.prompt.slice(middle - 20, middle + 20).replace(/ /g, '\n  ');
  return `prompt is malformed near: "${piece}"`;
}

describe('provider errors: the caller gets a fixed message, the owner the provider’s words', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let owner: { key: string; agentId: string; loopId: string };
  let stranger: string;
  const clients: Client[] = [];

  const call = (key: string, agent = 'oracle') =>
    p.request('POST', `/vault/${agent}/v1/run`, { key, body: { question: 'What is the weather?' } });

  /** The line of the call `requestId` matching `pattern` in the agent's log (other calls wrote some too). */
  const ownerLog = (pattern: RegExp, requestId: string, agentId = owner.agentId) =>
    waitFor(`a log line of ${requestId} matching ${pattern}`, async () => {
      const page = await p.request<{ logs: { message: string; request_id: string }[] }>(
        'GET',
        `/agents/${agentId}/logs`,
        { key: owner.key },
      );
      return page.body.logs.find((l) => l.request_id === requestId && pattern.test(l.message));
    });
  const requestIdOf = (res: { body: unknown }) =>
    (res.body as { metadata: { request_id: string } }).metadata.request_id;

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform(
      {
        ANTHROPIC_API_KEY: 'sk-ant-test-key',
        ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
      },
      'sqlite',
      {},
      { inMemory: true },
    );
    const o = await createAccount(p.deps, { org: 'vault', tier: 'pro' });
    const s = await createAccount(p.deps, { org: 'curious', tier: 'pro' });
    stranger = s.api_key;
    const publish = async (manifest: Record<string, unknown>) => {
      const res = await p.request<{ id: string }>('POST', '/agents?allow_no_secrets=true', {
        key: o.api_key,
        body: { supported_providers: ['anthropic'], is_public: true, prompt_template: TEMPLATE, ...manifest },
      });
      assert.equal(res.status, 201, res.text);
      return res.body.id;
    };
    const agentId = await publish({ name: 'oracle', description: 'Answers questions.' });
    const loopId = await publish({
      name: 'looping-oracle',
      type: 'agent',
      description: 'Answers questions with tools.',
      required_secrets: [],
    });
    owner = { key: o.api_key, agentId, loopId };
    // The template is server-only: the stranger cannot read it.
    const shown = await p.request('GET', '/public/agents/vault/oracle/v1', { key: stranger });
    assert.equal(shown.status, 200, shown.text);
    assert.ok(!shown.text.includes('MARMALADE'), 'the template is not shown to callers');
  });
  beforeEach(() => fake.reset());
  after(async () => {
    for (const c of clients) await c.close();
    await p.close();
    await fake.close();
  });

  it('answers a plain call with a fixed message, the status and the vendor’s error type', async () => {
    fake.setResponder((c) => ({ status: 400, errorMessage: quotingError(c) }));
    const res = await call(stranger);
    assert.equal(res.status, 502, res.text);
    assert.ok(squash(fake.calls[0]?.rawRequest ?? '').includes('marmalade'), 'the template was sent');
    const err = errorOf(res) as { code: string; message: string; is_retryable: boolean; details?: unknown };
    assert.equal(err.code, 'LLM_ERROR');
    assert.equal(err.is_retryable, true);
    assert.equal(err.message, 'The anthropic provider answered an error (invalid_request)');
    assert.deepEqual(err.details, {
      provider: 'anthropic',
      provider_error_type: 'api_error',
      upstream_status: 400,
    });
    assertNoFragment(res.text, 'the plain error');

    fake.setResponder((c) => ({ status: 429, errorMessage: quotingError(c) }));
    const limited = await call(stranger);
    assert.equal(limited.status, 502, limited.text);
    assert.equal(errorOf(limited).message, 'The anthropic provider answered an error (rate_limit)');
    assert.equal(
      (errorOf(limited) as { details?: { provider_error_type?: string } }).details?.provider_error_type,
      'rate_limit_error',
    );
    assertNoFragment(limited.text, 'the rate-limit error');
  });

  it('ends a streamed call with an error event that quotes nothing, before and during the answer', async () => {
    const stream = () =>
      p.fetch('/vault/oracle/v1/run', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${stranger}`,
          'content-type': 'application/json',
          accept: 'text/event-stream',
        },
        body: JSON.stringify({ question: 'What is the weather?' }),
      });
    // Refused before any byte of the answer.
    fake.setResponder((c) => ({ status: 400, errorMessage: quotingError(c) }));
    const refused = await stream();
    const refusedText = await refused.text();
    assert.match(refusedText, /LLM_ERROR/);
    assert.match(refusedText, /The anthropic provider answered an error \(invalid_request\)/);
    assertNoFragment(refusedText, 'the refused stream');

    // The vendor's error event in the middle of the answer.
    fake.setResponder((c) => ({
      text: 'It is sunny today',
      chunks: ['It ', 'is ', 'sunny'],
      streamError: { afterChunks: 1, type: 'overloaded_error', message: quotingError(c) },
    }));
    const started = Date.now();
    const res = await stream();
    assert.equal(res.status, 200);
    const { events } = await readEventStream(res, started);
    assert.deepEqual(
      events.map((e) => e.event),
      ['delta', 'error'],
    );
    const envelope = JSON.parse(events[1]?.data ?? '{}') as {
      error: { code: string; message: string; details?: { provider_error_type?: string } };
    };
    assert.equal(envelope.error.code, 'LLM_ERROR');
    assert.match(envelope.error.message, /^The anthropic provider failed in the middle of its answer/);
    assert.equal(envelope.error.details?.provider_error_type, 'overloaded_error');
    assertNoFragment(JSON.stringify(events), 'the error event');
  });

  it('answers an MCP tool call with an error result that quotes nothing', async () => {
    fake.setResponder((c) => ({ status: 400, errorMessage: quotingError(c) }));
    const client = await connectMcp(p.url, stranger, '?public=vault/oracle', p.fetch);
    clients.push(client);
    const result = await client.callTool({
      name: 'vault__oracle',
      arguments: { question: 'What is the weather?' },
    });
    const err = toolErrorOf(result);
    assert.equal(err.code, 'LLM_ERROR');
    assert.equal(err.message, 'The anthropic provider answered an error (invalid_request)');
    assertNoFragment(JSON.stringify(result), 'the MCP tool error');
  });

  it('writes the provider’s words to the owner’s log, not to the owner’s answer either', async () => {
    fake.setResponder((c) => ({ status: 400, errorMessage: quotingError(c) }));
    const res = await call(owner.key);
    assert.equal(res.status, 502, res.text);
    assertNoFragment(res.text, 'the owner’s error');
    const line = await ownerLog(
      /^provider error \(anthropic, HTTP 400, api_error\): prompt is malformed near/,
      requestIdOf(res),
    );
    assert.ok(
      squash(line.message).includes('marmalade-sunrise-42 and it'),
      `the log has the provider's words: ${line.message}`,
    );
    assert.ok(!line.message.includes('sk-ant-test-key'));
  });

  it('does the same for a managed loop whose model request fails', async () => {
    fake.setResponder((c) => ({ status: 400, errorMessage: quotingError(c) }));
    const res = await call(stranger, 'looping-oracle');
    assert.equal(res.status, 502, res.text);
    assert.equal(errorOf(res).message, 'The anthropic provider answered an error (invalid_request)');
    assertNoFragment(res.text, 'the loop’s error');
    const mine = await call(owner.key, 'looping-oracle');
    assert.equal(mine.status, 502, mine.text);
    const line = await ownerLog(
      /^provider error \(anthropic, HTTP 400, api_error\)/,
      requestIdOf(mine),
      owner.loopId,
    );
    assert.ok(squash(line.message).includes('prompt is malformed near'), line.message);
  });
});
