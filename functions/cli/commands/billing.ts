/**
 * `agenthost billing …`: credits (one credit is one US cent; docs/billing.md). `topup` starts a
 * checkout and prints where to pay; on a platform with local payments (one machine, no money
 * moves) `confirm` pays it from the terminal, as the checkout page's button does.
 */
import type { Command } from 'commander';
import { MAX_TOPUP_CREDITS, MIN_TOPUP_CREDITS } from '../../core/billing/billing-limits.ts';
import type { CliContext, Client } from '../cli-context.ts';
import { CliError, EXIT } from '../cli-errors.ts';
import { printList, printRecord } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { intArg } from '../option-parsers.ts';

type Transaction = Awaited<ReturnType<Client['billing']['transactions']>>['transactions'][number];

const dollars = (credits: number) => `$${(credits / 100).toFixed(2)}`;

/**
 * A local checkout's URL is the platform's own checkout page (/billing/checkout/<session>); a
 * Stripe one is on Stripe's host. Only the local kind can be confirmed from here.
 */
function isLocalCheckout(checkoutUrl: string, sessionId: string): boolean {
  try {
    return new URL(checkoutUrl).pathname === `/billing/checkout/${sessionId}`;
  } catch {
    return false;
  }
}

const transactionColumns = [
  { header: 'CREATED', value: (t: Transaction) => t.created_at },
  { header: 'TYPE', value: (t: Transaction) => t.type },
  { header: 'CREDITS', value: (t: Transaction) => (t.amount > 0 ? `+${t.amount}` : String(t.amount)) },
  { header: 'AGENT', value: (t: Transaction) => t.agent },
  { header: 'REFERENCE', value: (t: Transaction) => t.reference },
];

function showTransactions(ctx: CliContext, data: unknown, rows: Transaction[]): void {
  printList(ctx, data, rows, transactionColumns, 'no transactions');
}

export function registerBilling(program: Command, cli: CliRuntime): void {
  const billing = program
    .command('billing')
    .description('Your credits: balance, top-ups and the ledger (one credit is one US cent)');

  billing
    .command('balance')
    .description('Show the account’s credit balance')
    .addHelpText('after', ['', 'Example:', '  agenthost billing balance --json'].join('\n'))
    .action(
      cli.action(async (ctx) => {
        const balance = await (await ctx.client()).billing.balance();
        printRecord(ctx, balance, [
          ['credits', balance.balance_credits],
          ['worth', dollars(balance.balance_credits)],
        ]);
      }),
    );

  billing
    .command('topup')
    .description('Buy credits: starts a checkout and prints the URL to pay at; the credits land once paid')
    .requiredOption(
      '--credits <n>',
      `how many credits, ${MIN_TOPUP_CREDITS} to ${MAX_TOPUP_CREDITS} (${dollars(MIN_TOPUP_CREDITS)} to ${dollars(MAX_TOPUP_CREDITS)})`,
      intArg(MIN_TOPUP_CREDITS, MAX_TOPUP_CREDITS),
    )
    .addHelpText(
      'after',
      [
        '',
        'Example:',
        '  agenthost billing topup --credits 2000',
        'Open checkout_url in a browser to pay. On a platform that takes local payments (agenthost',
        'start on one machine), confirm it there or with `agenthost billing confirm SESSION_ID`.',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, opts: { credits: number }) => {
        const credits = opts.credits;
        const checkout = await (await ctx.client()).billing.checkout({ credits });
        printRecord(ctx, checkout, [
          ['checkout_url', checkout.checkout_url],
          ['session', checkout.session_id],
          ['credits', checkout.credits],
          ['amount', `${(checkout.amount_cents / 100).toFixed(2)} ${checkout.currency.toUpperCase()}`],
        ]);
        if (isLocalCheckout(checkout.checkout_url, checkout.session_id))
          ctx.note(
            `This platform takes local payments (no money moves): open the URL and press Confirm, or run\n  agenthost billing confirm ${checkout.session_id}`,
          );
        else
          ctx.note('Open checkout_url in a browser to pay; the credits land once the payment is confirmed.');
      }),
    );

  billing
    .command('confirm')
    .description('Local payments only: pay a checkout from the terminal, as its page’s Confirm button does')
    .argument('<session>', 'the checkout’s session id (billing topup prints it)')
    .addHelpText('after', '\nExample:\n  agenthost billing confirm lcs_…')
    .action(
      cli.action(async (ctx, session: string) => {
        if (!/^[A-Za-z0-9_-]{8,255}$/.test(session))
          throw new CliError(`not a checkout session id: ${session}`, EXIT.usage, 'billing topup prints it');
        const confirmed = await (await ctx.client({ requireKey: false })).billing.confirmLocalCheckout(
          session,
        );
        printRecord(ctx, confirmed, [
          ['session', confirmed.session_id],
          ['status', confirmed.status],
          ['credits', confirmed.credits],
          ['landed', confirmed.landed ? 'yes' : 'no (already paid)'],
          ['balance', confirmed.balance_credits],
        ]);
      }),
    );

  billing
    .command('transactions')
    .description('List ledger entries, newest first: top-ups (+), charges (−) and refunds (+)')
    .option('--limit <n>', 'entries per page, 1-500 (default 50)', intArg(1, 500))
    .option('--offset <n>', 'skip this many entries first', intArg(0, 1_000_000))
    .option('--all', 'every page, not only the first')
    .addHelpText('after', '\nExample:\n  agenthost billing transactions --all --json')
    .action(
      cli.action(async (ctx, opts: { limit?: number; offset?: number; all?: boolean }) => {
        const limit = opts.limit;
        const offset = opts.offset;
        if (opts.all && offset !== undefined)
          throw new CliError('--all lists every entry; it takes no --offset', EXIT.usage);
        const client = await ctx.client();
        if (opts.all) {
          const all: Transaction[] = [];
          for await (const t of client.billing.iterateTransactions(limit ?? 500)) all.push(t);
          showTransactions(ctx, { transactions: all, total: all.length }, all);
          return;
        }
        const page = await client.billing.transactions({
          ...(limit !== undefined ? { limit } : {}),
          ...(offset !== undefined ? { offset } : {}),
        });
        showTransactions(ctx, page, page.transactions);
        const shown = (offset ?? 0) + page.transactions.length;
        if (!ctx.json && page.total > shown)
          ctx.note(`(${page.total} in all: --all to list every one, or --offset ${shown})`);
      }),
    );
}
