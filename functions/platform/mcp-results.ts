import { type CallToolResult, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { CallResponse } from '../core/calls/call-context.ts';
import { errorEnvelope } from '../edge/error-answer.ts';
import { PlatformError } from '../shared/errors.ts';
import type { Deps } from './deps.ts';

/*
 * What an MCP tool call answers (docs/mcp.md, "Errors"): the agent's answer as a tool result, a
 * failed call as a tool result with isError, and failures outside a call as JSON-RPC errors. The
 * same for a plain tool call (mcp-server.ts) and a task's result, read from its run (mcp-tasks.ts).
 */

/** The agent's answer: its data as structured content, and as JSON text for clients that read only text. */
export function toolResult(result: CallResponse, requestId: string): CallToolResult {
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
export function toolError(deps: Deps, err: unknown, requestId: string): CallToolResult {
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
export class JsonRpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/** A failure outside a call (listing, resolving a tool) as a JSON-RPC error that says nothing internal. */
export function protocolError(deps: Deps, err: unknown, requestId: string): JsonRpcError {
  const error = asPlatformError(deps, err, requestId);
  return new JsonRpcError(ErrorCode.InternalError, error.message, errorEnvelope(error, requestId).error);
}

/** A PlatformError as it is; anything else logged, and answered as INTERNAL_ERROR without its details. */
export function asPlatformError(deps: Deps, err: unknown, requestId: string): PlatformError {
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

/**
 * A run's result (`{status, body}`: the plain call's answer, docs/runs.md) as the tool result the
 * plain tool call would have answered: the success envelope as toolResult makes it, the error
 * envelope as toolError's text. No `headers` in its meta: a run keeps the body, not the headers.
 */
export function runToolResult(result: { status: number; body: Record<string, unknown> }): CallToolResult {
  const body = result.body;
  if (result.status < 400 && 'data' in body) {
    const envelope = body as CallResponse['body'] & { metadata: { request_id: string } };
    return toolResult({ body: envelope, headers: {} }, envelope.metadata.request_id);
  }
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
}
