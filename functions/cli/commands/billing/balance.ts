/** `agenthost billing balance`: show the account’s credit balance. */
import type { Command } from 'commander';
import { printRecord } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { dollars } from './billing-view.ts';

export function registerBillingBalance(billing: Command, cli: CliRuntime): void {
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
}
