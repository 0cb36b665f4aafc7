import { AgentHostError } from '../../sdk/src/errors.ts';

/**
 * An error as the API gave it: its code and message (and request id, to find it in the logs).
 * Anything else is shown with its own message, never a blank page: NETWORK_ERROR when the API
 * could not be reached, PAGE_ERROR for a fault in the page itself.
 */
export function ApiError({ error, title }: { error: unknown; title?: string }) {
  const api = error instanceof AgentHostError ? error : undefined;
  const message = error instanceof Error ? error.message : String(error);
  // fetch rejects with a TypeError whose message each browser words its own way.
  const network = error instanceof TypeError && /fetch|NetworkError|Load failed/i.test(message);
  return (
    <div class="error" role="alert">
      {title && <strong>{title}: </strong>}
      <code class="error-code">{api ? api.code : network ? 'NETWORK_ERROR' : 'PAGE_ERROR'}</code>{' '}
      <span class="error-message">{message}</span>
      {api?.requestId && <span class="muted"> (request {api.requestId})</span>}
    </div>
  );
}
