import Stripe from 'stripe';
import type { CheckoutRequest, Payments, WebhookEvent } from '../../ports/payments.ts';
import { WebhookSignatureError } from '../../ports/payments.ts';

export interface StripePaymentsOptions {
  secretKey: string;
  webhookSecret: string;
  /** Another API host (tests: a loopback server speaking Stripe's API). */
  api?: { host: string; port: number; protocol: 'http' | 'https' };
}

/**
 * Payments through Stripe's SDK: a Checkout Session per top-up (one line item of the credits'
 * price, the account and credits in metadata), and webhooks verified with the SDK's signature
 * check. Only checkout.session.completed with payment_status "paid" lands credits.
 */
export class StripePayments implements Payments {
  readonly kind = 'stripe' as const;
  readonly hostsCheckoutPage = false;
  private readonly stripe: Stripe;
  private readonly webhookSecret: string;

  constructor(options: StripePaymentsOptions) {
    this.stripe = new Stripe(options.secretKey, {
      maxNetworkRetries: 2,
      timeout: 10_000,
      ...(options.api
        ? { host: options.api.host, port: options.api.port, protocol: options.api.protocol }
        : {}),
    });
    this.webhookSecret = options.webhookSecret;
  }

  async createCheckout(request: CheckoutRequest): Promise<{ sessionId: string; url: string }> {
    const session = await this.stripe.checkout.sessions.create({
      mode: 'payment',
      client_reference_id: request.accountId,
      line_items: [
        {
          quantity: 1,
          price_data: {
            currency: request.currency,
            unit_amount: request.amountCents,
            product_data: { name: `${request.credits} agenthost credits` },
          },
        },
      ],
      metadata: { account_id: request.accountId, credits: String(request.credits) },
      success_url: request.successUrl,
      cancel_url: request.cancelUrl,
    });
    if (!session.url) throw new Error('Stripe returned a Checkout Session without a URL');
    return { sessionId: session.id, url: session.url };
  }

  async parseWebhook(rawBody: Buffer, signature: string | undefined): Promise<WebhookEvent> {
    if (!signature) throw new WebhookSignatureError('Missing Stripe-Signature header');
    let event: Stripe.Event;
    try {
      event = this.stripe.webhooks.constructEvent(rawBody, signature, this.webhookSecret);
    } catch (err) {
      throw new WebhookSignatureError(`Stripe signature check failed: ${(err as Error).message}`);
    }
    const object = event.data.object as { id?: string; object?: string; payment_status?: string };
    const isSession = object.object === 'checkout.session';
    return {
      eventId: event.id,
      type: event.type,
      sessionId: isSession ? (object.id ?? null) : null,
      paid:
        (event.type === 'checkout.session.completed' ||
          event.type === 'checkout.session.async_payment_succeeded') &&
        object.payment_status === 'paid',
    };
  }
}
