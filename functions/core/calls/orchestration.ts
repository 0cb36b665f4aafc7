/**
 * Orchestration in the call pipeline, both ends of a sub-call: the checks a call made with a run's
 * service key must pass (callable, a hop left, time left within the orchestrator's deadline), and
 * what an orchestrator's run is given (its service key, network to reach the platform, strict mode
 * and the platform-side call of its dependencies).
 */
import type { CoreDeps } from '../../ports/core-deps.ts';
import { PlatformError } from '../../shared/errors.ts';
import { newRequestId } from '../../shared/request-ids.ts';
import { findVersion } from '../agents/agent-lookup.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import { type AuthContext, authenticate } from '../api-keys/api-keys.ts';
import type { CallContext, CallRequest, CallResponse, RunExtras } from './call-context.ts';
import { Deadline } from './deadline.ts';
import { issueServiceKey, recordedServiceKey, type ServiceContext } from './service-keys.ts';

/**
 * A call made with a run's PLATFORM_SERVICE_KEY (a sub-call of an orchestrator): the callee must
 * be callable, a hop must be left, and the callee's deadline is the earlier of its own and the
 * orchestrator's. A sub-call that could not finish in the time left fails with TIMEOUT before it
 * starts. Returns the callee's deadline.
 */
export function checkSubCall(
  deps: CoreDeps,
  service: ServiceContext,
  agent: AgentVersion,
  deadline: Deadline,
): Deadline {
  const ref = `${agent.org}/${agent.name}/${agent.version}`;
  if (!agent.manifest.callable) {
    throw new PlatformError('FORBIDDEN', `${ref} is not callable as a dependency (callable: false)`);
  }
  if (service.hops_remaining < 1) {
    throw new PlatformError(
      'FORBIDDEN',
      `Hop limit reached: ${service.orchestrator} may not make further calls`,
    );
  }
  const orchestrator = Deadline.atPlatformTime(deps.clock, service.deadline_ms);
  if (orchestrator.remainingMs() < 50)
    throw new PlatformError('TIMEOUT', 'The sub-call would exceed the remaining deadline');
  return deadline.earlier(orchestrator);
}

/** The gateway's entry point, passed in (this module is below it): how a dependency is called. */
export type CallAgent = (deps: CoreDeps, auth: AuthContext, req: CallRequest) => Promise<CallResponse>;

/**
 * An orchestrator's run (an agent with dependencies) gets a service key bound to it: its hops are
 * the smaller of the caller's X-Platform-Max-Hops (for a sub-call: what the parent had left, less
 * this hop) and its own max_hops; its deadline is the run's; its budget is per_call_downstream_cap;
 * strict when it or its parent is. The key and the platform's URL go in its environment, and the
 * run gets network to reach the platform. The key is deleted when the run ends.
 */
/** Whether the agent's runs orchestrate others: a sandboxed agent with dependencies. */
export function isOrchestrator(agent: AgentVersion): boolean {
  const section = agent.manifest.manifest;
  return !!section && section.dependencies.length > 0 && agent.manifest.execution_engine !== 'direct_llm';
}

export async function orchestrationFor(
  deps: CoreDeps,
  call: CallContext,
  callAgent: CallAgent,
): Promise<{ extras: RunExtras; revoke: () => Promise<void> } | undefined> {
  const { auth, agent } = call;
  const section = agent.manifest.manifest;
  if (!section || !isOrchestrator(agent)) {
    return auth.service?.strict ? { extras: { strict: true }, revoke: async () => undefined } : undefined;
  }
  const header = call.request.headers('x-platform-max-hops');
  let callerHops: number;
  if (auth.service) {
    callerHops = auth.service.hops_remaining - 1;
  } else if (header !== undefined) {
    callerHops = Number(header); // its shape checked with the call's other headers (call-headers.ts)
  } else {
    callerHops = section.max_hops;
  }
  const context: ServiceContext = {
    run_id: call.request.requestId,
    orchestrator: `${agent.org}/${agent.name}/${agent.version}`,
    dependencies: section.dependencies.map((d) => `${d.id}/${d.version}`),
    hops_remaining: Math.max(0, Math.min(callerHops, section.max_hops)),
    deadline_ms: call.deadline.platformMs(),
    budget: section.per_call_downstream_cap,
    strict: auth.service?.strict === true || section.orchestration_mode === 'strict',
    ...(call.trace ? { trace_id: call.trace.traceId, span_id: call.trace.root.context.spanId } : {}),
  };
  // A run's credential is its step: carried on, it keeps what the first one used (service-keys.ts).
  const { steps } = call.request;
  const issued = steps
    ? await recordedServiceKey(deps, steps, auth.accountId, context)
    : await issueServiceKey(deps, auth.accountId, context);
  const callDependency = async (
    dependency: { id: string; version: string },
    input: Record<string, unknown>,
    signal?: AbortSignal,
  ) => {
    const subAuth = await authenticate(deps, `Bearer ${issued.key}`, { acceptRunCredential: true });
    const [org, name] = dependency.id.split('/') as [string, string];
    const target = await findVersion(deps, org, name, dependency.version);
    try {
      const result = await callAgent(deps, subAuth, {
        org,
        agent: name,
        version: dependency.version,
        endpoint: target?.manifest.default_endpoint ?? 'run',
        body: Buffer.from(JSON.stringify(input)),
        contentType: 'application/json',
        headers: () => undefined,
        requestId: newRequestId(),
        // Under the span of the tool call that made it (the loop's tool span).
        traceParent: call.trace?.parentHere(),
        // The orchestrator's run ending (its deadline, its caller gone, a cancel) ends this call
        // as its caller gone, as a sub-call over HTTP ends when its request is cut.
        signal,
      });
      return JSON.stringify({ data: result.body.data, warnings: result.body.warnings });
    } catch (err) {
      if (!(err instanceof PlatformError)) throw err;
      return JSON.stringify({ error: { code: err.code, message: err.message } });
    }
  };
  return {
    extras: {
      env: {
        PLATFORM_SERVICE_KEY: issued.key,
        ...(deps.config.publicUrl ? { PLATFORM_API_URL: deps.config.publicUrl } : {}),
      },
      // Locally the run may also call the API itself with its key; ECS tasks have no route to it
      // and call their dependencies through the platform only (callDependency).
      network: deps.sandbox.egress ? 'egress' : 'none',
      // In a network of its own, the platform's port is one of the few host loopback ports it may
      // reach; the operator's list (PLATFORM_SANDBOX_HOST_PORTS) is the rest.
      hostLoopbackPorts: [...deps.config.sandboxHostPorts, ...loopbackPortOf(deps.config.publicUrl)],
      strict: context.strict,
      subCalls: issued.subCalls,
      callDependency,
    },
    revoke: issued.revoke,
  };
}

/** The port of a URL on this host's loopback (the local platform's own URL), as a list of one or none. */
function loopbackPortOf(url: string | undefined): number[] {
  if (!url) return [];
  const u = new URL(url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) return [];
  return [Number(u.port || (u.protocol === 'https:' ? 443 : 80))];
}
