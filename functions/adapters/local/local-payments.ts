import { randomBytes } from 'node:crypto';
import type { CheckoutRequest, Payments, WebhookEvent } from '../../ports/payments.ts';
import { WebhookSignatureError } from '../../ports/payments.ts';

/**
 * Local payments: the checkout URL is a page on this platform (GET /billing/checkout/{id}) whose
 * button confirms the payment (POST .../confirm), landing the top-up through the same ledger path
 * as a Stripe webhook. No money moves; it is for running agenthost on one machine.
 */
export class LocalPayments implements Payments {
  readonly kind = 'local' as const;
  readonly hostsCheckoutPage = true;
  private readonly baseUrl: string;

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  async createCheckout(_request: CheckoutRequest): Promise<{ sessionId: string; url: string }> {
    const sessionId = `lcs_${randomBytes(24).toString('base64url')}`;
    return { sessionId, url: `${this.baseUrl}/billing/checkout/${sessionId}` };
  }

  async parseWebhook(): Promise<WebhookEvent> {
    throw new WebhookSignatureError('This platform takes local payments: there is no payment webhook');
  }
}
