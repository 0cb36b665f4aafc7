import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { request as undiciRequest } from 'undici';

/**
 * The MCP SDK's own client on the platform's POST /mcp, configured as an MCP host would be: the
 * URL (with its ?public= selection) and an Authorization header; `fetch`, what sends its requests
 * (the in-memory platform's `fetch`; the global fetch unless given).
 */
export async function connectMcp(
  baseUrl: string,
  key: string | null,
  query = '',
  fetch?: (url: string | URL, init?: RequestInit) => Promise<Response>,
): Promise<Client> {
  const client = new Client({ name: 'agenthost-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp${query}`), {
    requestInit: key === null ? {} : { headers: { Authorization: `Bearer ${key}` } },
    ...(fetch ? { fetch } : {}),
  });
  await client.connect(transport);
  return client;
}

/**
 * A `tools/call` made a task (MCP's tasks, docs/mcp.md): the created task, as the SDK's own schema
 * for the answer reads it.
 */
export async function startTask(client: Client, name: string, args: Record<string, unknown>) {
  const { CreateTaskResultSchema } = await import('@modelcontextprotocol/sdk/experimental/tasks/types.js');
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );
  return created.task;
}

/** The platform's error envelope in an isError tool result's text. */
export function toolErrorOf(result: Record<string, unknown>): {
  code: string;
  message: string;
  is_retryable: boolean;
} {
  if (result.isError !== true) throw new Error(`Not a tool error: ${JSON.stringify(result)}`);
  const [first] = result.content as { type: string; text: string }[];
  if (first?.type !== 'text') throw new Error(`No text content: ${JSON.stringify(result)}`);
  return (JSON.parse(first.text) as { error: { code: string; message: string; is_retryable: boolean } })
    .error;
}

/**
 * One MCP POST with headers fetch may not send (`Host` is a forbidden header there): sent to the
 * platform's own loopback address, with the given Host and Origin as a DNS-rebinding page's
 * browser would send them.
 */
export async function postMcpAs(
  baseUrl: string,
  key: string | null,
  headers: Record<string, string>,
  message: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const res = await undiciRequest(`${baseUrl}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(key === null ? {} : { authorization: `Bearer ${key}` }),
      ...headers,
    },
    body: JSON.stringify(message),
  });
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
}
