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
    tag: 'Billing',
    success: { status: 200, schema: balanceSchema, description: 'The balance in credits' },
  }),
  createCheckout: route({
    method: 'POST',
    path: '/billing/checkout',
    module: 'billing',
    auth: 'api-key',
    summary: 'Start a top-up: a checkout session for the credits (500 to 1,000,000; one credit is one cent)',
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
    tag: 'Billing',
    params: checkoutParams,
    success: { status: 200, schema: confirmSchema, description: 'The checkout, paid' },
  }),
} as const;
