import { type AgentHostClient, createClient } from '../../sdk/src/client.ts';

export type { AgentHostClient };

/**
 * The typed SDK client for this origin: the dashboard is served by the platform it talks to, so
 * calls are same-origin (no CORS) and the page's connect-src 'self' allows nothing else.
 */
export function clientFor(apiKey: string): AgentHostClient {
  return createClient({ baseUrl: window.location.origin, apiKey });
}
