/**
 * `agenthost billing …`: credits (one credit is one US cent; docs/billing.md). `topup` starts a
 * checkout and prints where to pay; on a platform with local payments (one machine, no money
 * moves) `confirm` pays it from the terminal, as the checkout page's button does.
 * One file a command, each added to the group in this order.
 */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { registerBillingBalance } from './balance.ts';
import { registerBillingConfirm } from './confirm.ts';
import { registerBillingTopup } from './topup.ts';
import { registerBillingTransactions } from './transactions.ts';

export function registerBilling(program: Command, cli: CliRuntime): void {
  const billing = program
    .command('billing')
    .description('Your credits: balance, top-ups and the ledger (one credit is one US cent)');
  registerBillingBalance(billing, cli);
  registerBillingTopup(billing, cli);
  registerBillingConfirm(billing, cli);
  registerBillingTransactions(billing, cli);
}
