import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { AgentVersion } from '../core/agents/agent-record.ts';
import type { AuthContext } from '../core/api-keys/api-keys.ts';
import type { CallEvents } from '../core/calls/call-context.ts';
import { listAgentTools, resolveAgentTool } from '../core/mcp/agent-tools.ts';
import { callAgentTool } from '../core/mcp/call-agent-tool.ts';
import { MAX_MCP_BODY_BYTES } from '../core/mcp/mcp-schemas.ts';
import { acceptsMediaType } from '../edge/accept-negotiation.ts';
import { startRun } from '../edge/async-call.ts';
import { errorEnvelope } from '../edge/error-answer.ts';
import { newRequestId } from '../shared/request-ids.ts';
import type { Deps } from './deps.ts';
import { asPlatformError, JsonRpcError, protocolError, toolError, toolResult } from './mcp-results.ts';
import { createdTask, runTaskStore, TASK_POLL_MS } from './mcp-tasks.ts';

/*
 * POST /mcp through the official MCP SDK (docs/mcp.md): a stateless Streamable HTTP server
 * (no session id; JSON responses, or an SSE stream when a tool call asks for progress with a
 * progress token, which then carries `notifications/progress` as the call runs), built for one
 * request and dropped after it, so the same code serves the local server and a Lambda with no long-lived process. Only the
 * mcp module imports this file, and lazily (functions/http/mcp.ts), so no other Lambda bundles the
 * SDK and the mcp Lambda's cold start does not read it.
 */

export interface McpRequest {
  body: Buffer;
  /** A request header by lower-case name. */
  header: (name: string) => string | undefined;
  /** The HTTP request's id: the first tool call's too, so its usage record and logs carry it. */
  requestId: string;
  /** API Gateway's id of the HTTP request, on AWS: its tool calls' log lines keep it (its access log's). */
  gatewayRequestId?: string | undefined;
  publicRefs: readonly string[];
  /**
   * The shell's AfterAnswer.onDelivered: sees a task's run through after the answer (docs/mcp.md,
   * "Tasks"), as it does a run of the call route.
   */
  onDelivered?: ((run: () => Promise<unknown>) => void) | undefined;
}

export interface McpAnswer {
  status: number;
  headers: Record<string, string>;
  /** The JSON answer, or the SSE stream of a request that asked for progress. */
  body: string | ReadableStream<Uint8Array>;
}

/** The headers the transport reads; the rest (the key among them) never reach the SDK. */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id'];

const INSTRUCTIONS =
  'Each tool is an agent hosted on agenthost, named org__agent. A tool call is an agent call: it counts against the daily quota, may cost credits, and its errors come back as tool results with isError set and the platform’s error (code, message) as JSON text.';

export async function serveMcp(deps: Deps, auth: AuthContext, request: McpRequest): Promise<McpAnswer> {
  const server = new Server(
    { name: 'agenthost', version: '0.1.0' },
    {
      capabilities: {
        tools: { listChanged: false },
        // Tool calls as tasks, which are runs: read, listed and cancelled through the runs store.
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      instructions: INSTRUCTIONS,
      taskStore: runTaskStore(deps, auth),
      defaultTaskPollInterval: TASK_POLL_MS,
    },
  );
  let callsStarted = 0;
  const streamed = wantsProgress(request.body, request.header('accept'));
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    try {
      return { tools: await listAgentTools(deps, auth, request.publicRefs) };
    } catch (err) {
      throw protocolError(deps, err, request.requestId);
    }
  });
  server.setRequestHandler(CallToolRequestSchema, async ({ params }, extra) => {
    // A JSON-RPC batch can hold several calls: each has its own id (the ledger and the usage
    // record are keyed by it); the first keeps the HTTP request's, which X-Request-Id reports.
    const requestId = callsStarted++ === 0 ? request.requestId : newRequestId();
    let agent: Awaited<ReturnType<typeof resolveAgentTool>>;
    try {
      agent = await resolveAgentTool(deps, auth, params.name, request.publicRefs);
    } catch (err) {
      throw protocolError(deps, err, requestId);
    }
    // Not one of the caller's tools (whether the agent exists or is another workspace's private
    // one is not told): a protocol error, as MCP has it for an unknown tool.
    if (!agent) throw new JsonRpcError(ErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
    if (params.task) return startTask(deps, auth, agent, { ...request, requestId }, params.arguments);
    try {
      const token = params._meta?.progressToken;
      const result = await callAgentTool(deps, auth, agent, {
        arguments: params.arguments,
        headers: request.header,
        requestId,
        gatewayRequestId: request.gatewayRequestId,
        // A streamed call's client gone (its stream cancelled, which closes this server, aborting
        // the handler's signal) ends the call as a hang-up ends a streamed call of the call route.
        ...(token !== undefined && streamed
          ? { events: progressEvents(token, extra.sendNotification), signal: extra.signal }
          : {}),
      });
      return toolResult(result, requestId);
    } catch (err) {
      return toolError(deps, err, requestId);
    }
  });

  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !streamed,
    maxRequestBodySize: MAX_MCP_BODY_BYTES,
  });
  await server.connect(transport);
  let closeLater = false;
  try {
    const headers = new Headers();
    for (const name of TRANSPORT_HEADERS) {
      const value = request.header(name);
      if (value !== undefined) headers.set(name, value);
    }
    const response = await transport.handleRequest(
      new Request('http://agenthost.invalid/mcp', {
        method: 'POST',
        headers,
        body: new Uint8Array(request.body),
      }),
    );
    const answer: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      answer[name === 'content-type' ? 'Content-Type' : name] = value;
    });
    if (streamed && response.body && response.headers.get('content-type')?.startsWith('text/event-stream')) {
      // The stream outlives this function: the server closes once it has been read to its end.
      closeLater = true;
      const close = () => void server.close();
      const body = response.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({ flush: close, cancel: close }),
      );
      return { status: response.status, headers: answer, body };
    }
    return { status: response.status, headers: answer, body: await response.text() };
  } finally {
    if (!closeLater) await server.close();
  }
}

/**
 * A tool call made a task (docs/mcp.md, "Tasks"): its agent call started as a run, as the call
 * route's `Prefer: respond-async` starts one (edge/async-call.ts), and answered with the task that
 * run is once it is admitted, charged and written. A refusal before that starts nothing and is a
 * JSON-RPC error carrying the platform's error envelope: there is no task to read it from.
 */
async function startTask(
  deps: Deps,
  auth: AuthContext,
  agent: AgentVersion,
  request: McpRequest,
  args: Record<string, unknown> | undefined,
) {
  const { requestId } = request;
  let started: Awaited<ReturnType<typeof startRun>>;
  try {
    started = await startRun(deps, { requestId, onDelivered: request.onDelivered }, (stream, signal, steps) =>
      callAgentTool(deps, auth, agent, {
        arguments: args,
        headers: request.header,
        requestId,
        gatewayRequestId: request.gatewayRequestId,
        stream,
        signal,
        steps,
        run: true,
      }),
    );
  } catch (err) {
    const error = asPlatformError(deps, err, requestId);
    const code = error.status >= 500 ? ErrorCode.InternalError : ErrorCode.InvalidParams;
    throw new JsonRpcError(code, error.message, errorEnvelope(error, requestId));
  }
  // A call answers only once it has run, and a call that runs opens its run first.
  if ('result' in started)
    throw protocolError(deps, new Error('A task’s call ended without its run'), requestId);
  return { task: createdTask(deps, started.record) };
}

/**
 * Whether the request holds a tool call that asks for progress (`params._meta.progressToken`)
 * from a client that reads SSE: then the answer is a stream, which carries the progress.
 */
function wantsProgress(body: Buffer, accept: string | undefined): boolean {
  if (accept === undefined || !acceptsMediaType(accept, 'text/event-stream')) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return false;
  }
  // A task's progress is its run's events (docs/mcp.md, "Tasks"): its answer is the task, as JSON.
  return (Array.isArray(parsed) ? parsed : [parsed]).some(
    (m: { method?: unknown; params?: { _meta?: { progressToken?: unknown }; task?: unknown } } | null) =>
      m?.method === 'tools/call' &&
      m.params?._meta?.progressToken !== undefined &&
      m.params.task === undefined,
  );
}

/**
 * A call's events as MCP progress notifications (one per event, `progress` counting up, no total):
 * the answer's text as the model writes it, and a managed loop's tool calls as they end.
 */
function progressEvents(
  progressToken: string | number,
  send: (notification: ServerNotification) => Promise<void>,
): CallEvents {
  let progress = 0;
  const notify = (message: string) =>
    send({
      method: 'notifications/progress',
      params: { progressToken, progress: ++progress, message },
    }).catch(() => undefined);
  return {
    delta: (text) => notify(text),
    step: (s) => notify(`${s.kind} ${s.name}: ${s.outcome} (${s.duration_ms} ms)`),
  };
}
