import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/**
 * The MCP SDK's own client on the platform's POST /mcp, configured as an MCP host would be: the
 * URL (with its ?public= selection) and an Authorization header.
 */
export async function connectMcp(baseUrl: string, key: string | null, query = ''): Promise<Client> {
  const client = new Client({ name: 'agenthost-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp${query}`), {
    requestInit: key === null ? {} : { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
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
