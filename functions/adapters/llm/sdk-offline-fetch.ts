import { AsyncLocalStorage } from 'node:async_hooks';
import { answerResponse, headerRecord, type ModelAnswer } from './model-transport.ts';

/** What the offline fetch does for the SDK call running in its context. */
export type OfflineExchange =
  /** Record the request the provider built, and send nothing (the SDK call then fails; ignored). */
  | { capture: (request: CapturedRequest) => void }
  /**
   * Answer the provider's first request with what the vendor already answered; any further
   * request (Gemini asks again to continue a long answer) goes to the vendor through `live`.
   */
  | { answer: ModelAnswer; live: typeof fetch; answered?: boolean }
  /** Fail the provider's request as the transport failed. */
  | { failure: unknown };

export interface CapturedRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

const exchange = new AsyncLocalStorage<OfflineExchange>();

/** Thrown by a capture so that the provider stops once its request is built. */
class Captured extends Error {}

/**
 * A `fetch` for a second instance of each AI SDK provider that never reaches the network: within
 * `offline(exchange, fn)` it records the provider's request or hands the provider an answer
 * already received. This lets the platform send prompt calls itself (ai-sdk-gateway.ts, `generate`)
 * while the SDK stays the one that builds each vendor's request (once per model and shape) and
 * reads every answer the platform's own readers do not (errors, refusals, unknown shapes), so
 * that what a caller sees is what the SDK would have made of the same bytes.
 */
export const offlineFetch: typeof fetch = async (input, init) => {
  const current = exchange.getStore();
  if (!current)
    throw new TypeError('fetch failed', { cause: new Error('offline fetch outside an exchange') });
  if ('capture' in current) {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    current.capture({ url, headers: headerRecord(init?.headers), body: String(init?.body ?? '') });
    throw new Captured('request captured');
  }
  if ('failure' in current) throw current.failure;
  if (current.answered) return current.live(input, init);
  current.answered = true;
  return answerResponse(current.answer);
};

/** Runs `fn` (an SDK call through an offline provider) with this exchange. */
export function offline<T>(current: OfflineExchange, fn: () => Promise<T>): Promise<T> {
  return exchange.run(current, fn);
}
