/** `agenthost runs webhook-secret`: make the account's webhook signing secret and print it once. */
import type { Command } from 'commander';
import { printRecord } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';

export function registerRunWebhookSecret(runs: Command, cli: CliRuntime): void {
  runs
    .command('webhook-secret')
    .description(
      'Make the secret runs’ completion webhooks are signed with, replacing the last, and print it once',
    )
    .addHelpText(
      'after',
      [
        '',
        'Example:',
        '  agenthost runs webhook-secret --json | jq -r .secret',
        'A run started with `agenthost call --async --webhook URL` is POSTed there when it ends, with',
        'X-Platform-Signature: t=<unix seconds>,v1=<HMAC-SHA256 of "<t>.<body>"> (docs/runs.md). A new',
        'secret signs every webhook sent from then on, a running run’s included.',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx) => {
        const made = await (await ctx.client()).runs.rotateWebhookSecret();
        // The platform keeps it to sign with and never shows it again: a receiver needs it now.
        ctx.note('The signing secret is shown once: give it to your webhook receiver now.');
        printRecord(ctx, made, [
          ['created', made.created_at],
          ['secret', made.secret],
        ]);
      }),
    );
}
