import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api-error.tsx';
import { LoadMore, useOffsetList } from '../components/load-more.tsx';
import { QueryState } from '../components/query-state.tsx';
import { formatCredits, formatTime } from '../format.ts';
import type { PageProps } from '../page-links.ts';
import { useSession } from '../session.tsx';

/** How long the balance is re-read after a payment, for a payment provider's webhook to land it. */
const POLL_MS = 3000;
const POLLS = 40;

/**
 * Where to send the browser for a checkout. A local checkout page (`/billing/checkout/{session}`,
 * the way the CLI recognises it) is opened on this origin: the platform that serves the dashboard
 * made it, and its address in `checkout_url` may name another host for the same server
 * (127.0.0.1 for localhost), where this tab's session would not be. Anything else (Stripe) as given.
 */
export function checkoutTarget(checkoutUrl: string, sessionId: string, origin: string): string {
  try {
    const url = new URL(checkoutUrl);
    if (url.pathname === `/billing/checkout/${sessionId}`) return `${origin}${url.pathname}`;
  } catch {
    // Not a URL: followed as given, and the browser says what is wrong with it.
  }
  return checkoutUrl;
}

/**
 * The account's credits: the balance, a top-up through the payment provider's checkout (the
 * browser goes there and comes back to `#/billing/paid` or `#/billing/cancelled`), and the ledger.
 */
export function Billing({ params }: PageProps) {
  const { client } = useSession();
  const returned = params[0];
  const balance = useQuery({
    queryKey: ['billing', 'balance'],
    queryFn: () => client.billing.balance(),
    // Back from paying: a provider's webhook may land the credits a little later.
    refetchInterval: (q) => (returned === 'paid' && q.state.dataUpdateCount < POLLS ? POLL_MS : false),
  });
  const transactions = useOffsetList(['billing', 'transactions'], async (page) => {
    const { transactions: items, total } = await client.billing.transactions(page);
    return { items, total };
  });
  // A balance that moved (a payment landed while polling) has a ledger entry to show.
  const queryClient = useQueryClient();
  const seenBalance = useRef<number | undefined>(undefined);
  const current = balance.data?.balance_credits;
  useEffect(() => {
    if (seenBalance.current !== undefined && current !== seenBalance.current) {
      queryClient.invalidateQueries({ queryKey: ['billing', 'transactions'] });
    }
    seenBalance.current = current;
  }, [current, queryClient]);

  return (
    <div class="billing">
      <h1>Billing</h1>
      {returned === 'paid' && (
        <p class="notice ok" role="status">
          Back from checkout: the credits show in the balance once the payment is confirmed.
        </p>
      )}
      {returned === 'cancelled' && (
        <p class="notice" role="status">
          Checkout cancelled: nothing was paid.
        </p>
      )}

      <div class="cards">
        <section aria-labelledby="balance-heading" class="card">
          <h2 id="balance-heading">Balance</h2>
          <QueryState query={balance} what="the balance" />
          {balance.data && (
            <p class="big-number" data-testid="balance">
              {formatCredits(balance.data.balance_credits)}
            </p>
          )}
          <p class="muted">One credit is one US cent. Paid agents charge credits per call.</p>
        </section>
        <section aria-labelledby="top-up-heading" class="card">
          <h2 id="top-up-heading">Top up</h2>
          <TopUpForm />
        </section>
      </div>

      <section aria-labelledby="transactions-heading">
        <h2 id="transactions-heading">Transactions</h2>
        {!transactions.query.isSuccess && <QueryState query={transactions.query} what="transactions" />}
        {transactions.query.isSuccess &&
          (transactions.items.length === 0 ? (
            <p class="muted">No transactions yet.</p>
          ) : (
            <>
              <div class="table-scroll">
                <table data-testid="transactions">
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Type</th>
                      <th scope="col">Credits</th>
                      <th scope="col">Agent</th>
                      <th scope="col">Reference</th>
                    </tr>
                  </thead>
                  <tbody>
                    {transactions.items.map((t) => (
                      <tr key={t.entry_id}>
                        <td>
                          <time dateTime={t.created_at}>{formatTime(t.created_at)}</time>
                        </td>
                        <td>{t.type}</td>
                        <td class={t.amount < 0 ? 'bad' : 'ok'}>
                          {t.amount > 0 ? '+' : ''}
                          {t.amount.toLocaleString()}
                        </td>
                        <td>{t.agent ?? '—'}</td>
                        <td>
                          <code>{t.reference}</code>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <LoadMore list={transactions} />
            </>
          ))}
      </section>
    </div>
  );
}

/**
 * How many credits to buy, then off to the checkout. The amount is checked by the API (500 to
 * 1,000,000), so its message is the one shown, as is "payments are not set up".
 */
function TopUpForm() {
  const { client } = useSession();
  const [credits, setCredits] = useState('1000');
  const checkout = useMutation({
    mutationFn: (amount: number) => client.billing.checkout({ credits: amount }),
    onSuccess: (session) => {
      window.location.assign(
        checkoutTarget(session.checkout_url, session.session_id, window.location.origin),
      );
    },
  });
  const amount = Number(credits);
  return (
    <form
      class="stack"
      onSubmit={(e) => {
        e.preventDefault();
        checkout.mutate(amount);
      }}
    >
      <label>
        Credits to buy
        <input
          type="number"
          name="credits"
          inputMode="numeric"
          step={1}
          value={credits}
          onInput={(e) => setCredits(e.currentTarget.value)}
          aria-describedby="top-up-hint"
          required
        />
      </label>
      <p id="top-up-hint" class="muted">
        {Number.isFinite(amount) && amount > 0 ? `${formatCredits(amount)}. ` : ''}500 to 1,000,000 credits.
      </p>
      {checkout.isError && <ApiError error={checkout.error} title="Could not start the checkout" />}
      <div>
        <button type="submit" disabled={checkout.isPending || checkout.isSuccess}>
          {checkout.isPending || checkout.isSuccess ? 'Going to checkout…' : 'Go to checkout'}
        </button>
      </div>
    </form>
  );
}
