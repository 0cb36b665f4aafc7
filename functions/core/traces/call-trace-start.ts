/**
 * Where a call's trace begins (docs/traces.md, "Trace context"): under the caller's `traceparent`
 * when it sends a valid one, else a new trace. A sub-call made with an orchestrator run's credential
 * always joins that run's trace (the credential says which, not the caller), under the span its
 * traceparent names when that span is of the same trace (sandboxed code passes on its
 * TRACEPARENT), else under the run's call span.
 */
import type { CoreDeps } from '../../ports/core-deps.ts';
import type { TraceParent, Tracer } from '../../ports/tracer.ts';
import { traceIdOfRequestId } from '../../shared/request-ids.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import type { CallRequest } from '../calls/call-context.ts';
import { CallTrace } from './call-trace.ts';
import { agentRef, rootName } from './trace-record.ts';

/** Tracers whose `ready()` has resolved: a call need not wait on it again (an await a call). */
const loaded = new WeakSet<Tracer>();

/**
 * The call's trace, or undefined when tracing is off or the tracer cannot load. Not a promise once
 * the tracer has loaded: an await a call less (docs/traces.md, "Cost").
 */
export function startCallTrace(
  deps: CoreDeps,
  auth: AuthContext,
  req: CallRequest,
  agent: AgentVersion,
  startedMs: number,
): CallTrace | undefined | Promise<CallTrace | undefined> {
  if (!deps.tracer.recording) return undefined;
  if (loaded.has(deps.tracer)) return begin(deps, auth, req, agent, startedMs);
  return loadThenBegin(deps, auth, req, agent, startedMs);
}

async function loadThenBegin(
  deps: CoreDeps,
  auth: AuthContext,
  req: CallRequest,
  agent: AgentVersion,
  startedMs: number,
): Promise<CallTrace | undefined> {
  try {
    await deps.tracer.ready();
    loaded.add(deps.tracer);
  } catch (err) {
    // A tracer that cannot load (a bundling slip) must not fail calls: they run untraced.
    deps.logger.error('tracer not loaded: the call runs without a trace', { error: String(err) });
    return undefined;
  }
  return begin(deps, auth, req, agent, startedMs);
}

/**
 * The call's own span. Its attributes are set as the call ends (call-report.ts), and only those its
 * stored trace keeps unless an exporter reads them.
 */
function begin(
  deps: CoreDeps,
  auth: AuthContext,
  req: CallRequest,
  agent: AgentVersion,
  startedMs: number,
): CallTrace {
  const parent = parentOf(deps, auth, req);
  const trace = new CallTrace(deps.tracer, rootName(agentRef(agent.org, agent.name, agent.version)), {
    parent,
    // A new trace is named by the call's request id (its stored trace then need not say it).
    traceId: parent ? undefined : traceIdOfRequestId(req.requestId),
    startMs: startedMs,
  });
  // The HTTP server span's attributes (known at its start, as the conventions ask), for an exporter.
  const http = req.http;
  if (http) {
    trace.root.setAttribute('http.request.method', http.method);
    trace.root.setAttribute('http.route', http.route);
    trace.root.setAttribute('url.path', http.path);
    trace.root.setAttribute('url.scheme', http.scheme);
  }
  return trace;
}

function parentOf(deps: CoreDeps, auth: AuthContext, req: CallRequest): TraceParent | undefined {
  const header = deps.tracer.parse(req.headers('traceparent'));
  const service = auth.service;
  if (!service?.trace_id || !service.span_id) return req.traceParent ?? header;
  const sameTrace = [req.traceParent, header].find((p) => p?.traceId === service.trace_id);
  return sameTrace ?? { traceId: service.trace_id, spanId: service.span_id };
}
