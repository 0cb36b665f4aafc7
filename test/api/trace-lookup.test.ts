import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { agentKeys } from '../../functions/core/agents/agent-keys.ts';
import { traceKeys } from '../../functions/core/traces/trace-record.ts';
import type { TraceView } from '../../functions/core/traces/trace-schemas.ts';
import { callRecordKeys } from '../../functions/core/usage/call-records.ts';
import { systemClock } from '../../functions/ports/clock.ts';
import type { AttrValue, Item } from '../../functions/ports/store.ts';
import { requestIdTime } from '../../functions/shared/request-ids.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { publishPromptAgent } from '../helpers/publish.ts';

/**
 * Where a call's trace is found (functions/core/traces/trace-lookup.ts). On the platform's own
 * clock a call's time is its request id's, so its record is found from the id and links its log
 * line: the line has no index entry of its own. The test files under test/api/ run on a fake clock
 * set months back, where a call keeps the clock's time and its line is indexed by its id (GSI2), as
 * on AWS, where the id is API Gateway's (test/e2e/traces.test.ts reads both ways across three hops,
 * its local deployment on the real clock): both ways read the same.
 */
describe('a call trace found through its record', () => {
  let p: TestPlatform;
  let fake: FakeLlmProviders;
  let author: { key: string; agentId: string; accountId: string };
  let caller: { key: string; accountId: string };

  before(async () => {
    fake = await startFakeLlm();
    p = await startTestPlatform(
      { OPENAI_API_KEY: 'sk-openai-test', OPENAI_BASE_URL: fake.baseUrls.openai },
      'sqlite',
      { clock: systemClock },
      { inMemory: true },
    );
    const a = await createAccount(p.deps, { org: 'finder', tier: 'pro' });
    const agentId = await publishPromptAgent(p, a.api_key, {
      is_public: true,
      prompt_template: 'Say {{text}}',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    });
    author = { key: a.api_key, agentId, accountId: a.account.id };
    const c = await createAccount(p.deps, { org: 'visitor', tier: 'pro' });
    caller = { key: c.api_key, accountId: c.account.id };
  });
  after(async () => {
    await p?.close();
    await fake?.close();
  });

  const call = async (key: string) => {
    fake.enqueue({ text: 'hello', usage: { inputTokens: 4, outputTokens: 1 } });
    const res = await p.request<{ metadata: { request_id: string } }>('POST', '/finder/echo/v1/run', {
      key,
      body: { text: 'x' },
    });
    assert.equal(res.status, 200, res.text);
    return res.body.metadata.request_id;
  };
  const traceOf = (key: string, requestId: string) =>
    p.request<TraceView>('GET', `/agents/${author.agentId}/calls/${requestId}/trace`, { key });

  /** The call's record under its caller, and its own log line. */
  async function stored(accountId: string, requestId: string): Promise<{ record: Item; line: Item }> {
    const at = new Date(requestIdTime(requestId) ?? Number.NaN).toISOString();
    const record = await p.deps.store.get({
      pk: callRecordKeys.callerPk(accountId),
      sk: callRecordKeys.sk(at, requestId),
    });
    assert.ok(record, 'the record is keyed by the time its request id carries');
    const lines = await p.deps.store.query({
      pk: agentKeys.version(author.agentId).pk,
      sk: { beginsWith: 'LOG#' },
    });
    const line = lines.items.find((l) => l.request_id === requestId && Array.isArray(l.spans));
    assert.ok(line, 'the call has a traced line');
    return { record, line };
  }

  it('writes the line without an index entry, its record naming it, and its caller and author read it', async () => {
    const requestId = await call(caller.key);
    const { record, line } = await stored(caller.accountId, requestId);
    assert.equal(line.gsi2pk, undefined, 'no index entry under the request id');
    assert.equal(line.sk, `LOG#${record.log_at}#${requestId}`);
    const byIndex = await p.deps.store.query({ index: 'gsi2', pk: traceKeys.ofCall(requestId) });
    assert.equal(byIndex.items.length, 0);

    // The caller finds the record under its own account; the author, under the agent's workspace.
    const outline = await traceOf(caller.key, requestId);
    assert.equal(outline.status, 200, outline.text);
    assert.ok(outline.body.spans.length > 0 && outline.body.spans.every((s) => s.visibility === 'outline'));
    const whole = await traceOf(author.key, requestId);
    assert.equal(whole.status, 200, whole.text);
    assert.ok(
      whole.body.spans.some((s) => s.name.startsWith('chat ')),
      whole.text,
    );
    assert.ok(whole.body.spans.every((s) => s.visibility === 'whole'));

    // What the record says, the line leaves out, and the read puts back (trace-from-record.ts).
    const spans = JSON.stringify(line.spans);
    for (const said of [`"${record.model}"`, `"${record.provider}"`, '"success"'])
      assert.ok(!spans.includes(said), `${said} is the record’s to say: ${spans}`);
    assert.deepEqual((line.spans as AttrValue[][])[0]?.[6], [], 'the call’s own span: all the record’s');
    assert.equal(line.spans_start, undefined, 'the spans count from the ms the request id was minted in');
    const [root, ...rest] = whole.body.spans;
    // Its start, µs after the call's time (the id's, minted as the request arrived).
    const after = Number((line.spans as AttrValue[][])[0]?.[4]);
    assert.ok(after >= 0);
    assert.equal(
      root?.start_time,
      new Date(Date.parse(String(record.at)) + Math.floor(after / 1000)).toISOString(),
    );
    assert.equal(root?.attributes['agenthost.outcome'], 'success');
    assert.equal(root?.attributes['http.response.status_code'], 200);
    assert.equal(root?.attributes['agenthost.endpoint'], 'run');
    const model = rest.find((s) => s.name === `chat ${record.model}`);
    assert.ok(model, whole.text);
    assert.equal(model.attributes['gen_ai.provider.name'], record.provider);
    assert.equal(model.attributes['gen_ai.request.model'], record.model);
    assert.deepEqual(model.attributes['gen_ai.response.finish_reasons'], ['stop']);
  });

  it("reads the author's own call, and refuses a third account as for a call that does not exist", async () => {
    const requestId = await call(author.key);
    assert.equal((await traceOf(author.key, requestId)).status, 200);
    const third = (await createAccount(p.deps, { org: 'third', tier: 'pro' })).api_key;
    assert.equal((await traceOf(third, requestId)).status, 404);
    // Its record found under the caller's own account does not make it another agent's call.
    const other = await publishPromptAgent(p, author.key, { name: 'other', prompt_template: 'Hi' });
    const wrongAgent = await p.request('GET', `/agents/${other}/calls/${requestId}/trace`, {
      key: author.key,
    });
    assert.equal(wrongAgent.status, 404, wrongAgent.text);
  });

  it('reads a line an earlier build wrote (indexed by its id, its record linking nothing)', async () => {
    const requestId = await call(caller.key);
    const { record, line } = await stored(caller.accountId, requestId);
    const linkedRead = await traceOf(author.key, requestId);
    // As the build before wrote them: the line says who called which agent, when its spans began,
    // their outcome and model (attribute names by number: trace-record.ts), and is indexed.
    const { log_at: _, ...unlinked } = record;
    await p.deps.store.put(unlinked);
    type Tuple = [AttrValue, AttrValue, AttrValue, AttrValue, AttrValue, AttrValue, AttrValue[]];
    const [root, ...rest] = line.spans as Tuple[];
    assert.ok(root);
    const said = (span: Tuple, name: AttrValue, attributes: AttrValue[]): AttrValue[] => [
      ...span.slice(0, 2),
      name,
      ...span.slice(3, 6),
      [...attributes, ...span[6]],
    ];
    const provider = String(record.provider);
    const model = String(record.model);
    const spans = [
      said(root, '', [0, 'run', 1, 'success', 2, 200]),
      ...rest.map((span) => (span[2] === '' ? said(span, `chat ${model}`, [8, provider, 9, model]) : span)),
    ];
    await p.deps.store.put({
      ...line,
      spans_start: Date.parse(String(record.at)),
      spans,
      agent_ref: 'finder/echo/v1',
      workspace_id: record.workspace_id,
      caller_account_id: caller.accountId,
      gsi2pk: traceKeys.ofCall(requestId),
      gsi2sk: 'TRACE',
    });
    const whole = await traceOf(author.key, requestId);
    assert.equal(whole.status, 200, whole.text);
    assert.ok(
      whole.body.spans.some((s) => s.name.startsWith('chat ')),
      whole.text,
    );
    assert.deepEqual(whole.body.spans, linkedRead.body.spans, 'read as the line its record links reads');
    assert.equal((await traceOf(caller.key, requestId)).status, 200);
  });

  it("keeps the record's link to its line out of the usage logs", async () => {
    const requestId = await call(caller.key);
    for (const [key, path] of [
      [caller.key, '/usage/logs'],
      [author.key, '/author-usage/logs'],
    ] as const) {
      const logs = await p.request<{ logs: Record<string, unknown>[] }>('GET', path, { key });
      assert.equal(logs.status, 200, logs.text);
      const entry = logs.body.logs.find((l) => l.request_id === requestId);
      assert.ok(entry, `${path} lists the call`);
      assert.ok(!('log_at' in entry), `${path}: ${JSON.stringify(entry)}`);
    }
  });
});
