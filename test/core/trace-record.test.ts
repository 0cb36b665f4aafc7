/**
 * A call's trace as its log line stores it (functions/core/traces/trace-record.ts): compact, so
 * that the bytes it adds to each call stay few (docs/traces.md, "Cost"), and read back exactly as it was
 * recorded. Here the encoding on its own; the API tests read traces through the route.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OtelTracer } from '../../functions/adapters/telemetry/otel-tracer.ts';
import { agentKeys } from '../../functions/core/agents/agent-keys.ts';
import type { CallOfLine } from '../../functions/core/traces/trace-from-record.ts';
import {
  type CallTraceInput,
  traceKeys,
  traceOfItem,
  writeTraceOnLine,
} from '../../functions/core/traces/trace-record.ts';
import { parseConfig } from '../../functions/platform/config.ts';
import { createTracer } from '../../functions/platform/tracer-deps.ts';
import type { AttrValue, Item } from '../../functions/ports/store.ts';
import type { EndedSpan, StoredSpan } from '../../functions/ports/tracer.ts';
import { createLogger } from '../../functions/shared/logger.ts';
import { builtUuidV7, newRequestId } from '../../functions/shared/request-ids.ts';

const AGENT = '3f0c2a9e-0000-4000-8000-000000000001';
const T0 = 1_795_665_699_871.25;

function span(
  id: string,
  parent: string | null,
  name: string,
  start: number,
  more: Partial<StoredSpan> = {},
): StoredSpan {
  return {
    span_id: id,
    parent_span_id: parent,
    name,
    kind: 'internal',
    start_ms: T0 + start,
    duration_ms: 1.5,
    status: 'ok',
    attributes: {},
    ...more,
  };
}

const TRACE_ID = '9659bcd02325b073b0b0201df8172a8d';

/** A span as the tracer hands it back ended: its ids in its context, its attributes a list. */
function ended(s: StoredSpan): EndedSpan {
  return {
    context: { traceId: TRACE_ID, spanId: s.span_id },
    parentSpanId: s.parent_span_id,
    name: s.name,
    kind: s.kind,
    startMs: s.start_ms,
    durationMs: s.duration_ms,
    status: s.status,
    attributes: Object.entries(s.attributes).flat(),
  };
}

/** The call's record, as written with its line: what a line only it reads need not say again. */
const RECORD: CallOfLine = {
  org: 'acme',
  agent: 'planner',
  version: 'v3',
  workspace_id: 'ws-1',
  caller_account_id: 'acct-1',
  endpoint: 'run',
  status: 'timeout',
  error_code: 'TIMEOUT',
  http_status: 504,
  credits: 2,
  compute_ms: 12.4,
  provider: 'openai',
  model: 'gpt-5-mini',
};

function input(spans: StoredSpan[], more: Partial<CallTraceInput> = {}): CallTraceInput {
  return {
    trace_id: TRACE_ID,
    request_id: 'req_01a21604-241f-7b47-b15a-20a6795e5456',
    parent_request_id: null,
    at: '2026-11-26T04:01:39.871Z',
    agent_id: AGENT,
    agent_ref: 'acme/planner/v3',
    workspace_id: 'ws-1',
    caller_account_id: 'acct-1',
    root_span_id: 'aaaaaaaaaaaaaaaa',
    dropped_spans: 0,
    spans: spans.map(ended),
    indexed: true,
    traced_by_request_id: false,
    record: RECORD,
    ...more,
  };
}

/** The log line as the store keeps it: the line's own fields, the trace's, through JSON. */
function stored(t: CallTraceInput): Item {
  const line: Item = {
    ...agentKeys.version(t.agent_id),
    sk: `LOG#${t.at}#x`,
    request_id: t.request_id,
    message: 'call succeeded',
  };
  writeTraceOnLine(line, t);
  return JSON.parse(JSON.stringify(line)) as Item;
}

describe('a call trace on its log line', () => {
  // As a call ends them: the root last, a sub-span under another, an exec with a non-ASCII value.
  const root = span('aaaaaaaaaaaaaaaa', 'ffffffffffffffff', 'call acme/planner/v3', 0, {
    kind: 'server',
    duration_ms: 41_000.125,
    status: 'error',
    attributes: {
      'agenthost.request_id': 'req_01a21604-241f-7b47-b15a-20a6795e5456',
      'agenthost.agent': 'acme/planner/v3',
      'agenthost.agent.id': AGENT,
      'agenthost.endpoint': 'run',
      'agenthost.outcome': 'timeout',
      'error.type': 'TIMEOUT',
      'http.response.status_code': 504,
      'agenthost.credits': 2,
      'agenthost.compute_ms': 12,
    },
  });
  const spans = [
    span('bbbbbbbbbbbbbbbb', 'aaaaaaaaaaaaaaaa', 'admission', 0.25, {
      attributes: { 'agenthost.quota': 'llm' },
    }),
    span('dddddddddddddddd', 'cccccccccccccccc', 'exec node', 12.5, {
      attributes: { 'process.exit.code': 0, 'process.executable.name': 'nöde', 'my.own': true },
    }),
    span('cccccccccccccccc', 'aaaaaaaaaaaaaaaa', 'sandbox', 2, { kind: 'client', duration_ms: 30 }),
    root,
  ];

  it('reads back every span as recorded, with its parent, times, kind, status and attributes', () => {
    const back = traceOfItem(stored(input(spans, { dropped_spans: 3 })));
    assert.ok(back);
    assert.equal(back.root_span_id, 'aaaaaaaaaaaaaaaa');
    assert.equal(back.agent_id, AGENT);
    assert.equal(back.dropped_spans, 3);
    assert.equal(back.parent_request_id, null);
    const byId = new Map(back.spans.map((s) => [s.span_id, s]));
    assert.equal(byId.size, spans.length);
    for (const original of spans) {
      const read = byId.get(original.span_id);
      assert.ok(read, original.span_id);
      assert.equal(read.parent_span_id, original.parent_span_id, original.name);
      assert.equal(read.name, original.name);
      assert.equal(read.kind, original.kind);
      assert.equal(read.duration_ms, original.duration_ms);
      assert.ok(Math.abs(read.start_ms - original.start_ms) < 0.001, original.name);
      assert.equal(read.status, original.status, original.name);
      assert.deepEqual(read.attributes, original.attributes, original.name);
    }
  });

  it('reads back each span’s parent among many, the root first wherever it ended', () => {
    // 40 spans (past the count where parents are found through a Map), a chain each under the one
    // before, and the root ended in the middle (a span ended after the call answered).
    const id = (i: number) => i.toString(16).padStart(16, '0');
    const chain = Array.from({ length: 40 }, (_, i) =>
      span(id(i + 1), i === 0 ? root.span_id : id(i), `exec ${i}`, i),
    );
    const many = [...chain.slice(0, 25), root, ...chain.slice(25)];
    const few = [...chain.slice(0, 3), root, ...chain.slice(3, 5)];
    for (const list of [many, few]) {
      const line = stored(input(list));
      const tuples = line.spans as AttrValue[][];
      assert.equal(tuples[0]?.[0], root.span_id, 'the root first');
      for (const tuple of tuples.slice(1))
        assert.equal(typeof tuple[1], 'number', 'a parent of the call by place');
      const back = new Map(traceOfItem(line)?.spans.map((s) => [s.span_id, s.parent_span_id]));
      assert.equal(back.size, list.length);
      for (const original of list) assert.equal(back.get(original.span_id), original.parent_span_id);
    }
  });

  it('keeps the root span under a span of another call (its orchestrator, or a caller)', () => {
    const back = traceOfItem(stored(input(spans)));
    assert.equal(back?.spans.find((s) => s.span_id === root.span_id)?.parent_span_id, 'ffffffffffffffff');
  });

  it('stores names it knows by number, and not what the line itself says', () => {
    const line = stored(input(spans));
    const text = JSON.stringify(line);
    for (const known of ['agenthost.quota', 'process.exit.code', 'http.response.status_code', 'error.type'])
      assert.ok(!text.includes(known), known);
    assert.ok(text.includes('my.own'), 'a name not listed is stored as itself');
    for (const field of ['agent_id', 'root_span_id', 'at', 'dropped_spans', 'parent_request_id'])
      assert.ok(!(field in line), field);
    assert.equal(
      text.match(/acme\/planner\/v3/g)?.length,
      1,
      'the agent: its field, not the call span’s name',
    );
    assert.equal((line.spans as unknown[][])[0]?.[2], '', 'the call span’s name is read back from the agent');
    assert.equal(traceOfItem(line)?.spans[0]?.name, 'call acme/planner/v3');
  });

  it('stores a list of one string as the string and reads it back as the list (lines before stored the string)', () => {
    const one = span('eeeeeeeeeeeeeeee', 'aaaaaaaaaaaaaaaa', 'chat gpt-5-mini', 1, {
      kind: 'client',
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.response.finish_reasons': ['end_turn'] },
    });
    const two = span('dddddddddddddddd', 'aaaaaaaaaaaaaaaa', 'chat gpt-5-mini', 2, {
      kind: 'client',
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.response.finish_reasons': ['stop', 'length'] },
    });
    const line = stored(input([one, two, ...spans]));
    const text = JSON.stringify(line.spans);
    assert.ok(text.includes(',"end_turn"'), 'one reason: its string');
    assert.ok(text.includes('["stop","length"]'), 'more: the list');
    const back = traceOfItem(line)?.spans;
    assert.deepEqual(back?.find((s) => s.span_id === one.span_id)?.attributes, one.attributes);
    assert.deepEqual(back?.find((s) => s.span_id === two.span_id)?.attributes, two.attributes);
  });

  it('leaves out what only an exporter reads, when its spans were exported', () => {
    const exportedOnly = {
      'http.request.method': 'POST',
      'http.route': '/{org}/{agent}/{version}/{endpoint}',
      'url.path': '/acme/planner/v3/run',
      'url.scheme': 'https',
      'gen_ai.response.id': 'chatcmpl-1',
      'gen_ai.response.model': 'gpt-5-mini-2026-01-01',
    };
    const chat = span('eeeeeeeeeeeeeeee', 'aaaaaaaaaaaaaaaa', 'chat gpt-5-mini', 1, {
      kind: 'client',
      attributes: { 'gen_ai.operation.name': 'chat', ...exportedOnly },
    });
    const line = stored(input([chat, ...spans], { exported: true }));
    const text = JSON.stringify(line.spans);
    for (const value of Object.values(exportedOnly)) assert.ok(!text.includes(value), value);
    assert.deepEqual(traceOfItem(line)?.spans.find((s) => s.span_id === chat.span_id)?.attributes, {
      'gen_ai.operation.name': 'chat',
    });
  });

  it('leaves out a trace id the request id names, and reads it back; keeps any other', () => {
    const own = '01a21604241f7b47b15a20a6795e5456';
    const began = stored(input(spans, { trace_id: own, traced_by_request_id: true }));
    assert.ok(!('trace_id' in began), 'a trace the call began: named by its request id');
    assert.equal(traceOfItem(began)?.trace_id, own);
    const joined = stored(input(spans));
    assert.equal(joined.trace_id, TRACE_ID, 'a caller’s trace, or a run’s: stored');
    assert.equal(traceOfItem(joined)?.trace_id, TRACE_ID);
    const drawn = stored(input(spans, { request_id: 'req_from-api-gateway' }));
    assert.equal(drawn.trace_id, TRACE_ID, 'a trace id drawn at random (an id of another shape)');
  });

  it('places a sub-call under its run (GSI1) and every call under its request id (GSI2)', () => {
    const sub = stored(input(spans, { parent_request_id: 'req_parent' }));
    assert.equal(sub.gsi2pk, traceKeys.ofCall('req_01a21604-241f-7b47-b15a-20a6795e5456'));
    assert.equal(sub.gsi1pk, traceKeys.children('req_parent'));
    assert.equal(sub.gsi1sk, '2026-11-26T04:01:39.871Z#req_01a21604-241f-7b47-b15a-20a6795e5456');
    assert.equal(traceOfItem(sub)?.parent_request_id, 'req_parent');
    assert.equal(stored(input(spans)).gsi1pk, undefined);
  });

  it('writes no index entry under the request id for a line its record links', () => {
    const linked = stored(input(spans, { indexed: false }));
    assert.equal(linked.gsi2pk, undefined);
    assert.equal(linked.gsi2sk, undefined);
    // Who called which agent is the record's to say: left out, and taken from the record on reading.
    for (const field of ['agent_ref', 'workspace_id', 'caller_account_id'])
      assert.ok(!(field in linked), field);
    assert.equal(traceOfItem(linked), undefined, 'not readable without its record');
    assert.deepEqual(traceOfItem(linked, RECORD), traceOfItem(stored(input(spans))));
    // A sub-call's line is also read by itself, under its run: it keeps them.
    const sub = stored(input(spans, { indexed: false, parent_request_id: 'req_parent' }));
    assert.equal(sub.gsi2pk, undefined);
    assert.equal(sub.gsi1pk, traceKeys.children('req_parent'), 'a sub-call is still found under its run');
    assert.equal(traceOfItem(sub)?.workspace_id, 'ws-1');
  });

  it('leaves out of a line its record alone reads the call’s time, outcome and model, and reads them back', () => {
    const chat = span('eeeeeeeeeeeeeeee', 'aaaaaaaaaaaaaaaa', 'chat gpt-5-mini', 1, {
      kind: 'client',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-5-mini',
        'gen_ai.usage.input_tokens': 4,
        'gen_ai.response.finish_reasons': ['stop'],
      },
    });
    // Another model than the call's (a sub-agent's own is its call's; a span may still name one).
    const other = span('ffffffffffff0000', 'aaaaaaaaaaaaaaaa', 'chat other-model', 3, {
      kind: 'client',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'other-model',
      },
    });
    // A tool call's span names its operation too, but no model: nothing of the record's is its.
    const tool = span('9999999999999999', 'aaaaaaaaaaaaaaaa', 'execute_tool search', 4, {
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search' },
    });
    const all = [chat, other, tool, ...spans];
    const linked = stored(input(all, { indexed: false }));
    const whole = stored(input(all));
    const text = JSON.stringify(linked.spans);
    for (const said of ['"run"', '"timeout"', '504', 'gpt-5-mini', '"openai"'])
      assert.ok(!text.includes(said), `${said}: the record says it`);
    assert.deepEqual((linked.spans as unknown[][])[0]?.[6], [], 'the call’s own span: all the record’s');
    assert.ok(!('spans_start' in linked), 'the spans count from the ms the request id was minted in');
    for (const kept of ['"stop"', 'other-model', '"anthropic"', '"llm"'])
      assert.ok(text.includes(kept), `${kept}: the record does not say it`);
    assert.ok(JSON.stringify(whole.spans).includes('gpt-5-mini'), 'an indexed line says it all');
    assert.ok(!('spans_start' in whole), 'whoever reads it, the request id says its time');
    assert.deepEqual(traceOfItem(linked, RECORD), traceOfItem(whole));
    const back = traceOfItem(linked, RECORD)?.spans;
    assert.deepEqual(back?.find((s) => s.span_id === tool.span_id)?.attributes, tool.attributes);
    // A linked line of the build before, which said it all, reads the same with its record.
    const { agent_ref: _a, workspace_id: _w, caller_account_id: _c, ...earlier } = whole;
    assert.deepEqual(traceOfItem(earlier, RECORD), traceOfItem(whole));
    assert.equal(back?.find((s) => s.span_id === chat.span_id)?.name, 'chat gpt-5-mini');
    assert.deepEqual(back?.find((s) => s.span_id === chat.span_id)?.attributes, chat.attributes);
    assert.equal(back?.find((s) => s.span_id === root.span_id)?.start_ms, T0);
    // Spans that began before the call's time (a caller's clock is not the record's) keep their start.
    const early = stored(
      input([span('1111111111111111', 'aaaaaaaaaaaaaaaa', 'admission', -2), ...spans], { indexed: false }),
    );
    assert.equal(early.spans_start, Math.floor(T0 - 2));
    assert.equal(
      traceOfItem(early, RECORD)?.spans.find((s) => s.span_id === '1111111111111111')?.start_ms,
      T0 - 2,
    );
    // A record that says otherwise than the spans (a line of an earlier build) takes nothing away.
    const otherRecord = { ...RECORD, status: 'error' as const, model: 'gpt-4o', http_status: 500 };
    const kept = JSON.stringify(stored(input(all, { indexed: false, record: otherRecord })).spans);
    for (const said of ['"timeout"', '504', 'gpt-5-mini']) assert.ok(kept.includes(said), said);
  });

  it('stores times as whole microseconds after a whole millisecond, and reads them back', () => {
    const line = stored(input(spans, { request_id: 'req_from-api-gateway' }));
    assert.equal(line.spans_start, Math.floor(T0), 'an id of another shape says no time');
    const tuples = line.spans as unknown[][];
    for (const tuple of tuples) {
      assert.ok(Number.isInteger(tuple[4]), `start ${tuple[4]}`);
      assert.ok(Number.isInteger(tuple[5]), `duration ${tuple[5]}`);
    }
    assert.equal(tuples[0]?.[5], 41_000_125, 'the root: 41,000.125 ms');
    assert.equal(tuples[0]?.[4], 250, 'the root started 0.25 ms after the whole ms (T0)');
  });

  it('reads a line written by the build before (times in ms after spans_start_ms) as written now', () => {
    // Written by traceOnLogLine at 3d30d20, the last build that stored milliseconds.
    const before: Item = {
      ...agentKeys.version(AGENT),
      sk: 'LOG#2026-11-26T04:01:39.885Z#x',
      request_id: 'req_01a21604-241f-7b47-b15a-20a6795e5456',
      trace_id: '9659bcd02325b073b0b0201df8172a8d',
      agent_ref: 'acme/planner/v3',
      workspace_id: 'ws-1',
      caller_account_id: 'acct-1',
      spans_start_ms: 1795665699871.123,
      spans: [
        ['aaaaaaaaaaaaaaaa', '', 'call acme/planner/v3', 1, 0, 14.021, [0, 'run', 2, 200]],
        ['bbbbbbbbbbbbbbbb', 0, 'admission', 0, 0.377, 0.412, [6, 'llm']],
        ['cccccccccccccccc', 0, 'chat gpt-4o-mini', 2, 0.913, 12.345, [8, 'openai', 10, 12]],
      ],
      gsi2pk: 'CALLTRACE#req_01a21604-241f-7b47-b15a-20a6795e5456',
      gsi2sk: 'TRACE',
    };
    const old = traceOfItem(before);
    assert.ok(old);
    assert.deepEqual(
      old.spans.map((s) => [s.span_id, s.parent_span_id, s.duration_ms]),
      [
        ['aaaaaaaaaaaaaaaa', null, 14.021],
        ['bbbbbbbbbbbbbbbb', 'aaaaaaaaaaaaaaaa', 0.412],
        ['cccccccccccccccc', 'aaaaaaaaaaaaaaaa', 12.345],
      ],
    );
    // The same spans recorded now: the same trace read back, times to the microsecond.
    const t0 = 1795665699871.123;
    const now = traceOfItem(
      stored(
        input(old.spans, { agent_ref: 'acme/planner/v3', workspace_id: 'ws-1', caller_account_id: 'acct-1' }),
      ),
    );
    assert.ok(now);
    assert.equal(old.spans[0]?.start_ms, t0);
    for (const [i, span] of old.spans.entries()) {
      const again: StoredSpan | undefined = now.spans[i];
      assert.equal(again?.span_id, span.span_id);
      assert.ok(Math.abs((again?.start_ms ?? 0) - span.start_ms) < 0.001, span.name);
      assert.equal(again?.duration_ms, span.duration_ms, span.name);
      assert.deepEqual(again?.attributes, span.attributes, span.name);
    }
  });

  it('reads a line in another shape (an earlier build of traces) as no trace, not a failure', () => {
    const earlier = {
      ...stored(input(spans)),
      spans: [['aaaaaaaaaaaaaaaa', '', 'call', 1, 0, 1, { 'agenthost.endpoint': 'run' }]],
    };
    assert.equal(traceOfItem(earlier), undefined);
    assert.equal(traceOfItem({ pk: 'AGENT#x', sk: 'LOG#x', message: 'a line without a trace' }), undefined);
  });
});

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('request ids', () => {
  it('are req_ and a version 7 UUID, in the order they were made', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(newRequestId());
      await new Promise((r) => setTimeout(r, 2));
    }
    for (const id of ids) assert.match(id.slice(4), UUID_V7);
    for (const id of ids) assert.ok(id.startsWith('req_'));
    assert.deepEqual([...ids].sort(), ids);
    const ms = Number.parseInt(ids[0]?.slice(4, 17).replace('-', '') ?? '', 16);
    assert.ok(Math.abs(ms - Date.now()) < 60_000, 'its first 48 bits are the time in ms');
  });

  it('are built the same way on a Node without crypto.randomUUIDv7', () => {
    const at = Date.UTC(2026, 10, 26, 4, 1, 39, 871);
    const id = builtUuidV7(at);
    assert.match(id, UUID_V7);
    assert.equal(Number.parseInt(id.slice(0, 13).replace('-', ''), 16), at);
    assert.ok(builtUuidV7(at) < builtUuidV7(at + 1), 'a later millisecond sorts after');
    assert.notEqual(builtUuidV7(at), builtUuidV7(at), 'the rest is random');
  });
});

describe('a span attribute that is a list', () => {
  it('keeps at most 16 strings, each cut at 256 characters like any value', () => {
    const tracer = new OtelTracer({ serviceName: 'test' });
    const s = tracer.startSpan('chat x', {});
    s.setAttribute(
      'gen_ai.response.finish_reasons',
      [...Array(20).keys()].map((i) => `${i}`.padEnd(300, 'x')),
    );
    const [, kept] = s.end()?.attributes ?? [];
    assert.ok(Array.isArray(kept));
    assert.equal(kept.length, 16);
    assert.ok(kept.every((v) => v.length === 256));
  });
});

describe('a span attribute that JSON cannot hold', () => {
  it('is left out, so the stored trace stays readable', () => {
    const tracer = new OtelTracer({ serviceName: 'test' });
    const s = tracer.startSpan('exec node', { attributes: { 'agenthost.cpu_ms': Number.NaN } });
    s.set({ 'agenthost.compute_ms': Number.POSITIVE_INFINITY, 'process.exit.code': 0 });
    assert.deepEqual(s.end()?.attributes, ['process.exit.code', 0]);
  });
});

describe('a recorded span', () => {
  const tracer = new OtelTracer({ serviceName: 'test' });

  it('keeps each attribute name once, its latest value, in the order first set', () => {
    const s = tracer.startSpan('exec node', { attributes: { 'process.executable.name': 'node', a: 1 } });
    s.setAttribute('a', 2);
    s.set({ b: 'x', 'process.executable.name': 'python3' });
    s.setAttribute('c', undefined);
    assert.deepEqual(s.end()?.attributes, ['process.executable.name', 'python3', 'a', 2, 'b', 'x']);
  });

  it('ends once: a second end, and attributes set after the first, change nothing', () => {
    const kept: EndedSpan[] = [];
    const s = tracer.startSpan('sandbox', { startMs: 1000, onEnd: (e) => kept.push(e) });
    const first = s.end({ endMs: 1002.5 });
    assert.equal(first?.durationMs, 2.5);
    assert.equal(first?.status, 'ok');
    s.setAttribute('late', true);
    assert.equal(s.end({ error: 'TIMEOUT', endMs: 5000 }), null);
    assert.equal(kept.length, 1, 'onEnd called once');
    assert.equal(kept[0], first);
    assert.deepEqual(first?.attributes, []);
    assert.equal(first?.durationMs, 2.5);
    assert.equal(first?.status, 'ok');
  });
});

describe('the tracer as the platform makes it', () => {
  it('is loaded once: every call awaits the same promise, and spans start after it', async () => {
    const tracer = createTracer(parseConfig({}), createLogger('error'));
    assert.throws(() => tracer.startSpan('call', {}), /before ready/);
    const first = tracer.ready();
    assert.equal(tracer.ready(), first, 'a call while it loads waits for the same load');
    await first;
    assert.equal(tracer.ready(), first, 'once loaded, no new promise a call');
    const span = tracer.startSpan('call', { kind: 'server' });
    assert.match(span.context.traceId, /^[0-9a-f]{32}$/);
  });
});
