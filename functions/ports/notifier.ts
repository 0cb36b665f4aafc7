/**
 * The Notifier port: outbound webhooks to user-given URLs (schedule failure streaks, test alerts, a
 * run's completion webhook). Deliveries are POSTs of a JSON payload, the URL checked again when
 * sent (adapters/outbound/outbound-url.ts).
 */
export interface AlertDelivery {
  url: string;
  /** Sent as `JSON.stringify(payload)`: a signature in `headers` is made over exactly that text. */
  payload: Record<string, unknown>;
  /** Names the delivery in logs (never the URL's query, which may hold a token). */
  label: string;
  /**
   * Headers sent with it beside its content type (a run webhook's signature). A signature, never a
   * secret: a delivery travels through queues and logs a secret must not (an AWS async invoke).
   */
  headers?: Record<string, string>;
  /** Attempts in all, first included; the sender's own number when absent, at most MAX_DELIVERY_ATTEMPTS. */
  attempts?: number;
}

/** The most attempts a delivery may ask for: the delivery function's timeout is set for them. */
export const MAX_DELIVERY_ATTEMPTS = 5;

export interface DeliveryResult {
  delivered: boolean;
  attempts: number;
  /** The receiver's last HTTP status, when it answered. */
  status: number | null;
  /** Why the delivery failed; null when delivered. */
  error: string | null;
}

/** Whether a URL may receive alerts: refused addresses (link-local, metadata; private in AWS) say why. */
export type AlertUrlCheck = { ok: true } | { ok: false; reason: string };

export interface Notifier {
  /**
   * Checks an alert URL when a schedule is saved (resolving its host, as delivery does; every
   * delivery checks again at send time).
   */
  checkUrl(url: string): Promise<AlertUrlCheck>;
  /**
   * Hands a delivery off and returns at once: it is sent off the caller's path, with a timeout and
   * bounded retries (local: in this process; AWS: an asynchronously invoked Lambda).
   */
  enqueue(delivery: AlertDelivery): Promise<void>;
  /** Sends now, with the same retries, and reports the outcome (test alerts). */
  deliver(delivery: AlertDelivery): Promise<DeliveryResult>;
  /** Resolves when every enqueued delivery of this process has finished (tests, shutdown). */
  drain(): Promise<void>;
}
