/**
 * The Payments port: top-ups of credits. Stripe in AWS (Checkout Sessions; the top-up lands only
 * when its signed webhook arrives), a local adapter whose checkout page confirms on this machine.
 */
export interface CheckoutRequest {
  accountId: string;
  credits: number;
  amountCents: number;
  currency: string;
  successUrl: string;
  cancelUrl: string;
}

export interface WebhookEvent {
  eventId: string;
  type: string;
  /** The Checkout Session, for checkout.session.* events. */
  sessionId: string | null;
  /** checkout.session.completed with payment_status paid. */
  paid: boolean;
}

/** A webhook whose signature does not verify (forged, tampered, too old): 400, nothing lands. */
export class WebhookSignatureError extends Error {
  override name = 'WebhookSignatureError';
}

export interface Payments {
  readonly kind: 'local' | 'stripe';
  /** True when the platform serves the checkout page and its confirm itself (local payments). */
  readonly hostsCheckoutPage: boolean;
  createCheckout(request: CheckoutRequest): Promise<{ sessionId: string; url: string }>;
  /** Verifies the signature (Stripe's scheme) and reads the event. */
  parseWebhook(rawBody: Buffer, signature: string | undefined): Promise<WebhookEvent>;
}
