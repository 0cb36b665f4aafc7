import type { CliContext, Client } from '../../cli-context.ts';
import { printList } from '../../cli-output.ts';

export type Transaction = Awaited<ReturnType<Client['billing']['transactions']>>['transactions'][number];

export const dollars = (credits: number) => `$${(credits / 100).toFixed(2)}`;

/**
 * A local checkout's URL is the platform's own checkout page (/billing/checkout/<session>); a
 * Stripe one is on Stripe's host. Only the local kind can be confirmed from here.
 */
export function isLocalCheckout(checkoutUrl: string, sessionId: string): boolean {
  try {
    return new URL(checkoutUrl).pathname === `/billing/checkout/${sessionId}`;
  } catch {
    return false;
  }
}

export const transactionColumns = [
  { header: 'CREATED', value: (t: Transaction) => t.created_at },
  { header: 'TYPE', value: (t: Transaction) => t.type },
  { header: 'CREDITS', value: (t: Transaction) => (t.amount > 0 ? `+${t.amount}` : String(t.amount)) },
  { header: 'AGENT', value: (t: Transaction) => t.agent },
  { header: 'REFERENCE', value: (t: Transaction) => t.reference },
];

export function showTransactions(ctx: CliContext, data: unknown, rows: Transaction[]): void {
  printList(ctx, data, rows, transactionColumns, 'no transactions');
}
