import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallBasis, CallEvents, CallStep } from '../../functions/core/calls/call-context.ts';
import { CallReport } from '../../functions/core/calls/call-report.ts';
import { PlatformError } from '../../functions/shared/errors.ts';

// What a streamed call sent decides whether its failure is refunded (docs/billing.md, "The caller
// gone"): CallReport.delivering notes it.

/** A report of a streamed call, and the events that reached its stream. */
function streamedReport(signal = new AbortController().signal) {
  const report = new CallReport({ request: { signal } } as unknown as CallBasis);
  const sent: (string | CallStep)[] = [];
  const events = report.delivering({
    delta: async (text) => {
      sent.push(text);
    },
    step: async (step) => {
      sent.push(step);
    },
  } satisfies CallEvents);
  return { report, events, sent };
}

const step: CallStep = { kind: 'tool', name: 'list_files', outcome: 'ok', duration_ms: 3 };

describe('a streamed call’s delivery', () => {
  it('counts a step as output sent, as a delta is; an empty delta is not', () => {
    const words = streamedReport();
    words.events.delta('');
    assert.equal(words.report.delivered, false);
    words.events.delta('yes');
    assert.equal(words.report.delivered, true);
    const steps = streamedReport();
    steps.events.step(step);
    assert.equal(steps.report.delivered, true, 'which tool the model called can be the answer');
  });

  it('counts nothing handed over once the caller has gone', () => {
    const gone = new AbortController();
    const { report, events } = streamedReport(gone.signal);
    gone.abort();
    events.delta('late');
    events.step(step);
    assert.equal(report.delivered, false);
  });

  it('sends nothing once the call failed: its refund was decided on what had gone out', () => {
    // An engine winding down after its deadline may still report text (the caller, still there,
    // would get it although the call was already refunded as undelivered).
    const { report, events, sent } = streamedReport();
    report.failed(new PlatformError('TIMEOUT', 'The call exceeded its deadline'));
    events.delta('the whole answer');
    events.step(step);
    assert.deepEqual(sent, []);
    assert.equal(report.delivered, false);
  });
});
