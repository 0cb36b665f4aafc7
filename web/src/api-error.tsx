import { AgentHostError } from '../../sdk/src/errors.ts';

/**
 * An error as the API gave it: its code and message (and request id, to find it in the logs).
 * Anything else (the network down, a bug) is shown with its own message, never a blank page.
 */
export function ApiError({ error, title }: { error: unknown; title?: string }) {
  const api = error instanceof AgentHostError ? error : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div class="error" role="alert">
      {title && <strong>{title}: </strong>}
      {api ? <code class="error-code">{api.code}</code> : <code class="error-code">NETWORK_ERROR</code>}{' '}
      <span class="error-message">{message}</span>
      {api?.requestId && <span class="muted"> (request {api.requestId})</span>}
    </div>
  );
}
