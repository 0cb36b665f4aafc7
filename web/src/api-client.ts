import { type AgentHostClient, createClient } from '../../sdk/src/client.ts';

export type { AgentHostClient };

/**
 * The typed SDK client for this origin: the dashboard is served by the platform it talks to, so
 * calls are same-origin (no CORS) and the page's connect-src 'self' allows nothing else.
 *
 * Without the SDK's retries: a person is looking. A playground call that failed with LLM_ERROR
 * would otherwise be sent up to three times from one click (each a model call, each perhaps
 * paid), with only the last answer shown; the page shows the error at once instead, and the
 * user chooses to try again.
 */
export function clientFor(apiKey: string): AgentHostClient {
  return createClient({ baseUrl: window.location.origin, apiKey, retry: false });
}
