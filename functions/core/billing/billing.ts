import type { CoreDeps } from '../../ports/core-deps.ts';
import { WebhookSignatureError } from '../../ports/payments.ts';
import { ConditionFailedError, cond } from '../../ports/store.ts';
import { notFound, PlatformError } from '../../shared/errors.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { getBalance, type LedgerEntry, listEntries, topUp } from './ledger.ts';

/** One credit is one US cent (docs/billing.md). */
export const CREDIT_PRICE_CENTS = 1;
export const CURRENCY = 'usd';
/** An unpaid checkout is forgotten after this long. */
const CHECKOUT_TTL_SECONDS = 7 * 86_400;

/**
 * Where a payer's browser goes after a checkout: the dashboard's billing page (served at `/` by
 * the platform, docs/dashboard.md), which refreshes the balance. Not an API route: a browser
 * arrives without a key.
 */
export const CHECKOUT_RETURN_PATHS = { paid: '/#/billing/paid', cancelled: '/#/billing/cancelled' } as const;

const checkoutKey = (sessionId: string) => ({ pk: `CHECKOUT#${sessionId}`, sk: 'CHECKOUT' });
const stripeEventKey = (eventId: string) => ({ pk: `PAYMENTEVENT#${eventId}`, sk: 'EVENT' });

export async function billingBalance(deps: CoreDeps, auth: AuthContext) {
  return { balance_credits: await getBalance(deps, auth.accountId), currency: 'credits' as const };
}

/**
 * POST /billing/checkout: a checkout for `credits` (500 to 1,000,000; one credit is one cent).
 * The top-up lands only when the payment is confirmed: Stripe's signed webhook, or locally the
 * checkout page's confirm button.
 */
export async function createCheckout(deps: CoreDeps, auth: AuthContext, credits: number) {
  const amountCents = credits * CREDIT_PRICE_CENTS;
  const base = deps.config.publicUrl ?? '';
  const session = await deps.payments.createCheckout({
    accountId: auth.accountId,
    credits,
    amountCents,
    currency: CURRENCY,
    successUrl: `${base}${CHECKOUT_RETURN_PATHS.paid}`,
    cancelUrl: `${base}${CHECKOUT_RETURN_PATHS.cancelled}`,
  });
  const now = deps.clock.now();
  await deps.store.put(
    {
      ...checkoutKey(session.sessionId),
      account_id: auth.accountId,
      credits,
      amount_cents: amountCents,
      status: 'open',
      created_at: now.toISOString(),
      ttl: Math.floor(now.getTime() / 1000) + CHECKOUT_TTL_SECONDS,
    },
    { condition: cond.notExists() },
  );
  return {
    session_id: session.sessionId,
    checkout_url: session.url,
    credits,
    amount_cents: amountCents,
    currency: CURRENCY,
  };
}

/** Lands a checkout's credits once (its session id is the ledger reference). */
async function landCheckout(
  deps: CoreDeps,
  sessionId: string,
): Promise<{ landed: boolean; credits: number }> {
  const checkout = await deps.store.get(checkoutKey(sessionId));
  if (!checkout) {
    deps.logger.warn('payment for an unknown checkout ignored', { session_id: sessionId });
    return { landed: false, credits: 0 };
  }
  const credits = Number(checkout.credits);
  const landed = await topUp(deps, String(checkout.account_id), credits, `checkout:${sessionId}`);
  await deps.store.update(
    checkoutKey(sessionId),
    { set: { status: 'completed' } },
    { condition: cond.exists() },
  );
  return { landed, credits };
}

/**
 * POST /billing/webhook (Stripe): the signature is checked with the SDK (a forged or tampered
 * event is 400 and lands nothing); an event id seen before is acknowledged and ignored; a paid
 * completed Checkout Session lands its credits once.
 */
export async function stripeWebhook(deps: CoreDeps, rawBody: Buffer, signature: string | undefined) {
  let event: Awaited<ReturnType<CoreDeps['payments']['parseWebhook']>>;
  try {
    event = await deps.payments.parseWebhook(rawBody, signature);
  } catch (err) {
    if (err instanceof WebhookSignatureError) throw new PlatformError('INVALID_INPUT', err.message);
    throw err;
  }
  try {
    await deps.store.put(
      {
        ...stripeEventKey(event.eventId),
        type: event.type,
        ttl: Math.floor(deps.clock.now().getTime() / 1000) + 30 * 86_400,
      },
      { condition: cond.notExists() },
    );
  } catch (err) {
    if (err instanceof ConditionFailedError) return { received: true, duplicate: true, landed: false };
    throw err;
  }
  if (!event.paid || !event.sessionId) return { received: true, duplicate: false, landed: false };
  try {
    const { landed } = await landCheckout(deps, event.sessionId);
    return { received: true, duplicate: false, landed };
  } catch (err) {
    // Credits that did not land must land on Stripe's retry of this event: the event id is let go,
    // so the retry is not a duplicate. The ledger's reference (the session id) keeps a landing
    // that did happen from happening twice.
    await deps.store.delete(stripeEventKey(event.eventId)).catch(() => undefined);
    throw err;
  }
}

function localOnly(deps: CoreDeps): void {
  if (!deps.payments.hostsCheckoutPage) throw notFound('Checkout');
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** GET /billing/checkout/{session_id} (local payments only): the page that confirms the payment. */
export async function localCheckoutPage(deps: CoreDeps, sessionId: string): Promise<string> {
  localOnly(deps);
  const checkout = await deps.store.get(checkoutKey(sessionId));
  if (!checkout) throw notFound('Checkout');
  const credits = Number(checkout.credits);
  const done = checkout.status === 'completed';
  const id = escapeHtml(sessionId);
  // The page is served by the platform that serves the dashboard, so its way back is a path on
  // this origin (where the dashboard's tab keeps its session).
  const back = done
    ? `<p><a href="${CHECKOUT_RETURN_PATHS.paid}">Back to agenthost</a></p>`
    : `<p><a href="${CHECKOUT_RETURN_PATHS.cancelled}">Cancel and go back to agenthost</a></p>`;
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>agenthost checkout</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}button{font-size:1rem;padding:.5rem 1rem}</style></head>
<body><h1>Top up ${credits.toLocaleString('en-US')} credits</h1>
<p>Local payments: no money moves. ${done ? 'This checkout is <strong>paid</strong>.' : 'Confirm to add the credits to the account.'}</p>
${done ? '' : `<form method="post" action="/billing/checkout/${id}/confirm"><button type="submit">Confirm payment</button></form>`}
${back}
</body></html>`;
}

/** POST /billing/checkout/{session_id}/confirm (local payments only): lands the credits, once. */
export async function confirmLocalCheckout(deps: CoreDeps, sessionId: string) {
  localOnly(deps);
  const { landed, credits } = await landCheckout(deps, sessionId);
  const checkout = await deps.store.get(checkoutKey(sessionId));
  if (!checkout) throw notFound('Checkout');
  return {
    session_id: sessionId,
    status: 'completed',
    credits,
    landed,
    balance_credits: await getBalance(deps, String(checkout.account_id)),
  };
}

/** GET /billing/transactions (and /billing/history): newest first, paged. */
export async function listTransactions(
  deps: CoreDeps,
  auth: AuthContext,
  query: { limit: number; offset: number },
) {
  const entries: LedgerEntry[] = await listEntries(deps, auth.accountId);
  return { transactions: entries.slice(query.offset, query.offset + query.limit), total: entries.length };
}
