import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { AuthContext } from '../core/api-keys/api-keys.ts';
import type { CallEvents, CallResponse } from '../core/calls/call-context.ts';
import { listAgentTools, resolveAgentTool } from '../core/mcp/agent-tools.ts';
import { callAgentTool } from '../core/mcp/call-agent-tool.ts';
import { MAX_MCP_BODY_BYTES } from '../core/mcp/mcp-schemas.ts';
import { acceptsMediaType } from '../edge/accept-negotiation.ts';
import { errorEnvelope } from '../edge/error-answer.ts';
import { PlatformError } from '../shared/errors.ts';
import { newRequestId } from '../shared/request-ids.ts';
import type { Deps } from './deps.ts';

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
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
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
  return (Array.isArray(parsed) ? parsed : [parsed]).some(
    (m: { method?: unknown; params?: { _meta?: { progressToken?: unknown } } } | null) =>
      m?.method === 'tools/call' && m.params?._meta?.progressToken !== undefined,
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

/** The agent's answer: its data as structured content, and as JSON text for clients that read only text. */
function toolResult(result: CallResponse, requestId: string): CallToolResult {
  const { data, warnings, metadata } = result.body;
  // Deprecation, Sunset and Link of a deprecated version, as the HTTP call answers them (its
  // X-Trace-Id is the metadata's trace_id, as in the HTTP envelope).
  const deprecation = Object.entries(result.headers).filter(([name]) => DEPRECATION_HEADERS.has(name));
  return {
    content: [{ type: 'text', text: JSON.stringify(data) }],
    structuredContent: data,
    _meta: {
      'agenthost/call': {
        request_id: requestId,
        version: metadata.version,
        processing_time_ms: metadata.processing_time_ms,
        ...(metadata.trace_id !== undefined ? { trace_id: metadata.trace_id } : {}),
        warnings,
        ...(deprecation.length > 0 ? { headers: Object.fromEntries(deprecation) } : {}),
      },
    },
  };
}

/** The headers a call of a deprecated version answers with (core/calls/gateway.ts, deprecationHeaders). */
const DEPRECATION_HEADERS = new Set(['Deprecation', 'Sunset', 'Link']);

/**
 * The call failed (quota, credits, input, deadline, the model…): a tool result with isError, so
 * the model sees why, whose text is the platform's error envelope as the HTTP route answers it.
 * No structuredContent: a client checks that against the tool's outputSchema, which an error
 * does not match.
 */
function toolError(deps: Deps, err: unknown, requestId: string): CallToolResult {
  const error = asPlatformError(deps, err, requestId);
  return {
    content: [{ type: 'text', text: JSON.stringify(errorEnvelope(error, requestId)) }],
    isError: true,
  };
}

/**
 * A JSON-RPC error as the SDK's server answers a handler's: its code, data and message as they are.
 * Not an McpError, whose message is already `MCP error <code>: …`: the server sends that message,
 * and the SDK's client prefixes it again (`MCP error -32602: MCP error -32602: Unknown tool: …`).
 */
class JsonRpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/** A failure outside a call (listing, resolving a tool) as a JSON-RPC error that says nothing internal. */
function protocolError(deps: Deps, err: unknown, requestId: string): JsonRpcError {
  const error = asPlatformError(deps, err, requestId);
  return new JsonRpcError(ErrorCode.InternalError, error.message, errorEnvelope(error, requestId).error);
}

/** A PlatformError as it is; anything else logged, and answered as INTERNAL_ERROR without its details. */
function asPlatformError(deps: Deps, err: unknown, requestId: string): PlatformError {
  if (err instanceof PlatformError) return err;
  deps.logger.error('unhandled error', {
    request_id: requestId,
    operation: 'mcpPost',
    error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
    stack: err instanceof Error ? err.stack : undefined,
  });
  return new PlatformError(
    'INTERNAL_ERROR',
    `Internal error; quote request id ${requestId} when reporting it`,
  );
}
