/** `agenthost billing topup`: buy credits: starts a checkout and prints the URL to pay at; the credits land once paid. */
import type { Command } from 'commander';
import { MAX_TOPUP_CREDITS, MIN_TOPUP_CREDITS } from '../../../core/billing/billing-limits.ts';
import { printRecord } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { intArg } from '../../option-parsers.ts';
import { dollars, isLocalCheckout } from './billing-view.ts';

export function registerBillingTopup(billing: Command, cli: CliRuntime): void {
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
}
