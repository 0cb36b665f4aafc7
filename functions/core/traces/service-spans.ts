/**
 * Always-on services' starts and restarts as spans, each the root of a trace of its own
 * (docs/traces.md, "Services"): a start (a deploy, an owner's restart, a change that needs one, a
 * resumption after the platform restarted) with its duration and outcome; a supervisor's restart
 * after a crash with its delay. They have no call to be stored with: they go to the exporter only.
 */
import type { CoreDeps } from '../../ports/core-deps.ts';
import type { SpanAttributes } from '../../ports/tracer.ts';
import { errorCode } from './call-trace.ts';

/** Runs `work` (a service's start) inside a root span `service {what}`. */
export async function tracedServiceStart<T>(
  deps: CoreDeps,
  what: 'start' | 'resume',
  attributes: SpanAttributes,
  work: () => Promise<T>,
): Promise<T> {
  if (!deps.tracer.recording || !(await tracerReady(deps))) return work();
  const span = deps.tracer.startSpan(`service ${what}`, { attributes });
  try {
    const result = await work();
    span.end();
    return result;
  } catch (err) {
    span.end({ error: errorCode(err) });
    throw err;
  }
}

/** A supervisor's decision to restart a crashed service, as a span of its own (failed: the app crashed). */
export async function serviceRestartSpan(deps: CoreDeps, attributes: SpanAttributes): Promise<void> {
  if (!deps.tracer.recording || !(await tracerReady(deps))) return;
  deps.tracer.startSpan('service restart', { attributes }).end({ error: 'CRASHED' });
}

/** Whether the tracer loaded: a tracer that cannot must not stop a service from starting. */
async function tracerReady(deps: CoreDeps): Promise<boolean> {
  try {
    await deps.tracer.ready();
    return true;
  } catch (err) {
    deps.logger.error('tracer not loaded: the service runs without a span', { error: String(err) });
    return false;
  }
}
