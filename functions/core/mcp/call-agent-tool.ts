import type { CoreDeps } from '../../ports/core-deps.ts';
import type { RunSteps } from '../../ports/run-steps.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import type { CallEvents, CallResponse, CallStream } from '../calls/call-context.ts';
import { callAgent } from '../calls/gateway.ts';

/**
 * An MCP tool call (docs/mcp.md): the agent call POST /{org}/{agent}/{version}/{endpoint} would
 * make, with the tool's arguments as its JSON body, through the same gateway: the visibility
 * check, quotas and the concurrency lease, credits, the deadline, the usage record and the logs
 * all apply as they do over HTTP. The request's X-Platform-* headers apply to it as to a call.
 */
export function callAgentTool(
  deps: CoreDeps,
  auth: AuthContext,
  agent: AgentVersion,
  call: {
    arguments: Record<string, unknown> | undefined;
    headers: (name: string) => string | undefined;
    requestId: string;
    gatewayRequestId?: string | undefined;
    /** The call's events, for a client that asked for progress (docs/mcp.md). */
    events?: CallEvents | undefined;
    /**
     * Where the call opens once it runs, instead of `events`: a run's, for a tool call made a task
     * (edge/async-call.ts startRun; docs/mcp.md, "Tasks").
     */
    stream?: CallStream | undefined;
    /** Aborted when the streamed call's client is gone, or its run is cancelled: the call ends at once. */
    signal?: AbortSignal | undefined;
    /** A task's run's steps (CallRequest.steps). */
    steps?: RunSteps | undefined;
    /** A task's call: its deadline is a run's (CallRequest.run). */
    run?: boolean | undefined;
  },
): Promise<CallResponse> {
  const { events } = call;
  const stream: CallStream | undefined = call.stream ?? (events ? { open: () => events } : undefined);
  return callAgent(deps, auth, {
    org: agent.org,
    agent: agent.name,
    version: agent.version,
    endpoint: agent.manifest.default_endpoint,
    body: Buffer.from(JSON.stringify(call.arguments ?? {})),
    contentType: 'application/json',
    headers: call.headers,
    requestId: call.requestId,
    gatewayRequestId: call.gatewayRequestId,
    ...(stream ? { stream, signal: call.signal, steps: call.steps, run: call.run } : {}),
  });
}
