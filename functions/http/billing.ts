import {
  billingBalance,
  confirmLocalCheckout,
  createCheckout,
  listTransactions,
  localCheckoutPage,
  stripeWebhook,
} from '../core/billing/billing.ts';
import { htmlAnswer } from '../edge/answers.ts';
import type { Operations } from '../edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { createModuleHandler } from './module-handler.ts';

export const operations: Operations<'billing'> = {
  getBalance: ({ deps, auth }) => billingBalance(deps, auth),
  createCheckout: ({ deps, auth, body }) => createCheckout(deps, auth, body.credits),
  listTransactions: ({ deps, auth, query }) => listTransactions(deps, auth, query),
  listBillingHistory: ({ deps, auth, query }) => listTransactions(deps, auth, query),
  paymentWebhook: ({ deps, body, header }) => stripeWebhook(deps, body.data, header('stripe-signature')),
  localCheckoutPage: async ({ deps, params }) => htmlAnswer(await localCheckoutPage(deps, params.session_id)),
  confirmLocalCheckout: async ({ deps, params, header }) => {
    const confirmed = await confirmLocalCheckout(deps, params.session_id);
    // The checkout page's form posts here from a browser: it gets the page back, now paid, with
    // its link back to the dashboard, not a JSON body to stare at. API clients send no form.
    const formPost = /^application\/x-www-form-urlencoded\b/i.test(header('content-type') ?? '');
    return formPost ? htmlAnswer(await localCheckoutPage(deps, params.session_id)) : confirmed;
  },
};

export const handler = createModuleHandler('billing', operations, lambdaDeps);
