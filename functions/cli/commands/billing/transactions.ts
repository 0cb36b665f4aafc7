/** `agenthost billing transactions`: list ledger entries, newest first: top-ups (+), charges (−) and refunds (+). */
import type { Command } from 'commander';
import { CliError, EXIT } from '../../cli-errors.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { intArg } from '../../option-parsers.ts';
import { showTransactions, type Transaction } from './billing-view.ts';

export function registerBillingTransactions(billing: Command, cli: CliRuntime): void {
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
