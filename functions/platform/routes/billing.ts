/*
 * Billing routes: balance, top-ups (checkout), the ledger, and the payment webhook.
 * Spread into the route table in functions/platform/routes.ts, whose order they keep.
 */

import { MAX_WEBHOOK_BYTES as MAX_PAYMENT_WEBHOOK_BYTES } from '../../core/billing/billing-limits.ts';
import {
  balanceSchema,
  checkoutBody,
  checkoutParams,
  checkoutSchema,
  confirmSchema,
  transactionsQuery,
  transactionsSchema,
  webhookAckSchema,
} from '../../core/billing/billing-schemas.ts';
import { route } from './route-def.ts';

export const billingRoutes = {
  getBalance: route({
    method: 'GET',
    path: '/billing/balance',
    module: 'billing',
    auth: 'api-key',
    summary: 'The account’s credit balance',
    description:
      'The calling account’s credits: what paid calls of others’ agents draw on (docs/billing.md).',
    tag: 'Billing',
    success: { status: 200, schema: balanceSchema, description: 'The balance in credits' },
  }),
  createCheckout: route({
    method: 'POST',
    path: '/billing/checkout',
    module: 'billing',
    auth: 'api-key',
    summary: 'Start a top-up: a checkout session for the credits (500 to 1,000,000; one credit is one cent)',
    description:
      'Opens a payment for the credits asked: a Stripe Checkout session, or with local payments (`npm start`) the platform’s own checkout page; the credits land once the payment is confirmed (docs/billing.md).',
    tag: 'Billing',
    body: checkoutBody,
    success: { status: 201, schema: checkoutSchema, description: 'The checkout URL to pay at' },
  }),
  listTransactions: route({
    method: 'GET',
    path: '/billing/transactions',
    module: 'billing',
    auth: 'api-key',
    summary: 'Ledger entries (top-ups, charges, refunds), newest first',
    description:
      'The calling account’s ledger: top-ups, charges of paid calls and their refunds, newest first, with the total (docs/billing.md, "The ledger").',
    tag: 'Billing',
    query: transactionsQuery,
    success: { status: 200, schema: transactionsSchema, description: 'Entries and the total' },
  }),
  listBillingHistory: route({
    method: 'GET',
    path: '/billing/history',
    module: 'billing',
    auth: 'api-key',
    summary: 'Alias of /billing/transactions',
    description: 'The same answer as GET /billing/transactions, under the other path the spec lists for it.',
    tag: 'Billing',
    query: transactionsQuery,
    success: { status: 200, schema: transactionsSchema, description: 'Entries and the total' },
  }),
  paymentWebhook: route({
    method: 'POST',
    path: '/billing/webhook',
    module: 'billing',
    auth: 'none',
    summary: 'Stripe’s webhook: a signed checkout.session.completed lands its credits, once',
    description:
      'For Stripe alone: an event signed with the webhook secret (Stripe-Signature) is checked before anything else; a completed checkout session lands its credits once, however often it is sent. No API key (docs/billing.md, "Payments").',
    tag: 'Billing',
    binaryBody: { maxBytes: MAX_PAYMENT_WEBHOOK_BYTES, contentTypes: ['application/json'] },
    success: { status: 200, schema: webhookAckSchema, description: 'Acknowledged' },
  }),
  localCheckoutPage: route({
    method: 'GET',
    path: '/billing/checkout/{session_id}',
    module: 'billing',
    auth: 'none',
    summary: 'Local payments only: the checkout page (HTML) with its confirm button',
    description:
      'With local payments (`npm start`) only: the page a checkout’s URL opens, whose button confirms the payment. Elsewhere 404. No API key: the session id, known to the account that opened it, is the credential.',
    tag: 'Billing',
    params: checkoutParams,
    success: { status: 200, description: 'The page', contentType: 'text/html' },
  }),
  confirmLocalCheckout: route({
    method: 'POST',
    path: '/billing/checkout/{session_id}/confirm',
    module: 'billing',
    auth: 'none',
    summary: 'Local payments only: confirm the payment; the credits land once',
    description:
      'With local payments (`npm start`) only: marks the checkout paid and lands its credits, once (a second confirm changes nothing). Elsewhere 404. No API key: the session id, known to the account that opened it, is the credential.',
    tag: 'Billing',
    params: checkoutParams,
    success: { status: 200, schema: confirmSchema, description: 'The checkout, paid' },
  }),
} as const;
