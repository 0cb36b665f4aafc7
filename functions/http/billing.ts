import {
  billingBalance,
  confirmLocalCheckout,
  createCheckout,
  listTransactions,
  localCheckoutPage,
  stripeWebhook,
} from '../core/billing/billing.ts';
import { createModuleHandler, HtmlReply, type Operations } from '../platform/http-handler.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';

export const operations: Operations<'billing'> = {
  getBalance: ({ deps, auth }) => billingBalance(deps, auth),
  createCheckout: ({ deps, auth, body }) => createCheckout(deps, auth, body.credits),
  listTransactions: ({ deps, auth, query }) => listTransactions(deps, auth, query),
  listBillingHistory: ({ deps, auth, query }) => listTransactions(deps, auth, query),
  paymentWebhook: ({ deps, body, header }) => stripeWebhook(deps, body.data, header('stripe-signature')),
  localCheckoutPage: async ({ deps, params }) =>
    new HtmlReply(await localCheckoutPage(deps, params.session_id)),
  confirmLocalCheckout: ({ deps, params }) => confirmLocalCheckout(deps, params.session_id),
};

export const handler = createModuleHandler('billing', operations, lambdaDeps);
