/**
 * A call's trace as it runs (functions/core/traces/call-trace.ts): each span kept once as it ends,
 * within the stored bounds, and what is still open at the call's end ended with the call's error,
 * however many spans the call started before (the started list lets go of ended ones as it grows).
 */
import assert from 'node:assert/strict';
import { AsyncResource } from 'node:async_hooks';
import { describe, it } from 'node:test';
import { OtelTracer } from '../../functions/adapters/telemetry/otel-tracer.ts';
import { CallTrace, MAX_STORED_SPANS, traced } from '../../functions/core/traces/call-trace.ts';
import type { TraceSpan } from '../../functions/ports/tracer.ts';

const errorOf = (attributes: readonly unknown[]) => attributes[attributes.indexOf('error.type') + 1];

function newTrace(): CallTrace {
  return new CallTrace(new OtelTracer({ serviceName: 'test' }), 'call acme/x/1', { startMs: Date.now() });
}

describe('a call trace', () => {
  it('ends what is still open with the call’s error, past many spans already ended', () => {
    const trace = newTrace();
    const open: TraceSpan[] = [];
    for (let i = 0; i < 300; i++) {
      const span = trace.start(`exec ${i}`);
      if (i % 100 === 7) open.push(span);
      else span.end();
    }
    assert.equal(trace.spans.length, 297);
    trace.finish('TIMEOUT');
    assert.equal(trace.spans.length, 301, 'the three open spans and the root');
    for (const span of open) {
      assert.ok(span.ended);
      const kept = trace.spans.find((s) => s.context.spanId === span.context.spanId);
      assert.equal(kept?.status, 'error');
      assert.equal(errorOf(kept?.attributes ?? []), 'TIMEOUT');
    }
    const root = trace.spans.at(-1);
    assert.equal(root?.context.spanId, trace.root.context.spanId);
    assert.equal(errorOf(root?.attributes ?? []), 'TIMEOUT');
    assert.equal(trace.spans.filter((s) => s.status === 'error').length, 4);
  });

  it('lets go of its scope at its end: work that outlives the call records no span', async () => {
    const trace = newTrace();
    const tool = trace.start('execute_tool search');
    // What a socket or a timer made inside the call keeps: the call's async context.
    const kept = trace.within(tool, () => new AsyncResource('late work'));
    assert.equal(
      kept.runInAsyncScope(() => trace.parentHere().spanId),
      tool.context.spanId,
      'work in the tool’s scope hangs under the tool’s span',
    );
    assert.equal(trace.parentHere().spanId, trace.root.context.spanId, 'outside it, under the call’s');
    trace.finish('TIMEOUT');
    const stored = trace.spans.length;
    assert.equal(
      kept.runInAsyncScope(() => trace.parentHere().spanId),
      trace.root.context.spanId,
      'the scope no longer holds the ended call',
    );
    const ran = await kept.runInAsyncScope(() => traced(trace, 'chat late', {}, async (span) => span));
    assert.equal(ran, undefined, 'traced work after the end runs without a span');
    const late = trace.start('exec late');
    late.setAttribute('process.exit.code', 0);
    assert.equal(late.end(), null, 'a span started after the end records nothing');
    assert.equal(trace.spans.length, stored);
  });

  it('hangs spans under its own scope only, not under an orchestrator’s an in-process sub-call runs in', () => {
    const outer = newTrace();
    const tool = outer.start('invoke_agent acme/leaf');
    const inner = newTrace();
    const span = outer.within(tool, () => inner.start('chat m'));
    assert.equal(span.end()?.parentSpanId, inner.root.context.spanId);
    assert.equal(
      outer.within(tool, () => inner.parentHere().spanId),
      inner.root.context.spanId,
    );
  });

  it('lets a span it ended go of the call: a scope that outlives the call may hold the span', () => {
    const trace = newTrace();
    const span = trace.start('execute_tool search');
    const callbacks = () => Object.values(span).filter((v) => typeof v === 'function').length;
    assert.equal(callbacks(), 1, 'its end keeps it with the call');
    span.end();
    assert.equal(callbacks(), 0, 'once ended, nothing of it reaches the call');
  });

  it('keeps each span once, and counts those past the stored bound as dropped', () => {
    const trace = newTrace();
    const first = trace.start('admission');
    first.end();
    first.end({ error: 'LATE' });
    for (let i = 0; i < MAX_STORED_SPANS + 10; i++) trace.start(`chat ${i}`).end();
    trace.finish(undefined);
    assert.equal(trace.spans.length, MAX_STORED_SPANS + 1, 'the bound, and the root whatever the count');
    assert.equal(trace.dropped, 11);
    assert.equal(trace.spans.filter((s) => s.name === 'admission').length, 1);
    assert.equal(trace.spans[0]?.status, 'ok');
  });
});
