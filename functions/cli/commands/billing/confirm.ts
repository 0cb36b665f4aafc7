/** `agenthost billing confirm`: local payments only: pay a checkout from the terminal, as its page’s Confirm button does. */
import type { Command } from 'commander';
import { CliError, EXIT } from '../../cli-errors.ts';
import { printRecord } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';

export function registerBillingConfirm(billing: Command, cli: CliRuntime): void {
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
}
