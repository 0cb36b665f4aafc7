import { type AlertDelivery, type DeliveryResult, MAX_DELIVERY_ATTEMPTS } from '../../ports/notifier.ts';
import { OutboundRequestError, type PlatformMode, type Resolver, safeFetch } from './outbound-url.ts';

export interface DeliveryPolicy {
  mode: PlatformMode;
  /** The emulated deployment's loopback receivers (OutboundUrlOptions.loopbackPorts). */
  loopbackPorts?: readonly number[] | undefined;
  /** Attempts in all, first one included (default 3). */
  attempts?: number;
  /** Per-attempt timeout (default 5 s). */
  timeoutMs?: number;
  /** Waits before the 2nd, 3rd, ... attempt (default 1 s, 4 s, 16 s, then 30 s), each ±20%. */
  backoffMs?: number[];
  resolve?: Resolver;
  sleep?: (ms: number) => Promise<void>;
}

export const ALERT_ATTEMPTS = 3;
export const ALERT_TIMEOUT_MS = 5000;
/**
 * An alert's three attempts wait the first two; a run webhook's five (docs/runs.md) all four: about
 * 51 s of waits and 25 s of attempts at most, which the delivery function's timeout covers
 * (lib/constructs/schedule-firing.ts).
 */
export const ALERT_BACKOFF_MS = [1000, 4000, 16_000, 30_000];

/**
 * Each wait moved by up to a fifth either way, so the deliveries of many runs that failed together
 * (a receiver down) do not come back at the same instants.
 */
const jittered = (ms: number) => Math.round(ms * (0.8 + Math.random() * 0.4));

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * POSTs an alert's JSON payload, checking the URL again at send time (a name that resolved to a
 * public address when saved may not now). A 2xx is delivered; a 5xx, a 429, a timeout or a
 * network failure is retried, up to `attempts` in all; any other answer, a redirect or a refused
 * address is final. Never throws.
 */
export async function deliverAlert(delivery: AlertDelivery, policy: DeliveryPolicy): Promise<DeliveryResult> {
  const attempts = Math.min(delivery.attempts ?? policy.attempts ?? ALERT_ATTEMPTS, MAX_DELIVERY_ATTEMPTS);
  const backoff = policy.backoffMs ?? ALERT_BACKOFF_MS;
  const sleep = policy.sleep ?? defaultSleep;
  const body = JSON.stringify(delivery.payload);
  let status: number | null = null;
  let error: string | null = null;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (attempt > 1) await sleep(jittered(backoff[Math.min(attempt - 2, backoff.length - 1)] ?? 1000));
    try {
      const res = await safeFetch(
        delivery.url,
        {
          method: 'POST',
          // The delivery's own headers cannot replace its content type (its signature signs a JSON body).
          headers: {
            'user-agent': 'agenthost-alerts/1',
            ...delivery.headers,
            'content-type': 'application/json',
          },
          body,
        },
        {
          mode: policy.mode,
          loopbackPorts: policy.loopbackPorts,
          timeoutMs: policy.timeoutMs ?? ALERT_TIMEOUT_MS,
          maxResponseBytes: 4096,
          ...(policy.resolve ? { resolve: policy.resolve } : {}),
        },
      );
      status = res.status;
      if (res.status >= 200 && res.status < 300)
        return { delivered: true, attempts: attempt, status, error: null };
      error = `the receiver answered HTTP ${res.status}`;
      if (res.status < 500 && res.status !== 429)
        return { delivered: false, attempts: attempt, status, error };
    } catch (err) {
      const kind = err instanceof OutboundRequestError ? err.kind : 'network';
      error = err instanceof Error ? err.message : String(err);
      if (kind === 'refused' || kind === 'redirect')
        return { delivered: false, attempts: attempt, status, error };
    }
  }
  return { delivered: false, attempts, status, error };
}
