import { redactSecretsInJson } from '../../shared/redact-secrets.ts';
import { StreamRedactor } from '../../shared/stream-redactor.ts';
import type { CallEvents, CallStep } from './call-context.ts';

/**
 * A streamed call's events with the run's secret values redacted, as its plain answer is
 * (docs/calls.md, "Streamed calls"). The `delta` texts go through one StreamRedactor, so that what
 * they add up to is the redacted text even when a value (or an encoded form) is split across
 * pieces: the last few characters wait for the next piece, or for `end`, which the engine calls
 * once its text is over. A step waiting text does not flush it: text on either side of a step is
 * still one answer to a client that joins the deltas.
 */
export function redactedEvents(
  events: CallEvents,
  secrets: Record<string, string>,
): { events: CallEvents; end(): Promise<void> } {
  const text = new StreamRedactor(secrets);
  // Each returns the event's promise: the engine waits on the client's pace through them.
  return {
    events: {
      delta: async (piece) => {
        const out = text.push(piece);
        if (out) await events.delta(out);
      },
      step: (step) => events.step(redactSecretsInJson(step, secrets) as CallStep),
    },
    end: async () => {
      const rest = text.end();
      if (rest) await events.delta(rest);
    },
  };
}
