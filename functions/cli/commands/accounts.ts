/**
 * `agenthost accounts create`: the operator's way to make an account (there is no sign-up API). It
 * writes to the platform's store directly (the data dir locally, the table in AWS mode), so it
 * works while the server runs.
 */
import type { Command } from 'commander';
import { TIERS, type Tier } from '../../ports/tiers.ts';
import { CliError, EXIT } from '../cli-errors.ts';
import { printRecord } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';

export function registerAccounts(program: Command, cli: CliRuntime): void {
  const accounts = program.command('accounts').description('Operator commands on the platform’s accounts');
  accounts
    .command('create')
    .description('Create an account, its personal workspace and its first API key, and print the key (once)')
    .requiredOption('--org <slug>', 'the account’s org slug (its agents are called as org/name)')
    .requiredOption('--tier <tier>', `the tier: ${TIERS.join(', ')}`)
    .option('--email <email>', 'the account’s email')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  agenthost accounts create --org acme --tier pro --email ops@acme.example',
        '  PLATFORM_DATA_DIR=/srv/agenthost agenthost accounts create --org acme --tier free --json',
        'Works against the data dir (local mode) or the table (PLATFORM_MODE=aws), not over HTTP.',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, opts: { org: string; tier: string; email?: string }) => {
        if (!(TIERS as readonly string[]).includes(opts.tier))
          throw new CliError(`--tier must be one of ${TIERS.join(', ')}`, EXIT.usage);
        // Imported when run: the settings' schema and the account's (zod) are not loaded by every
        // other command.
        const { processConfig } = await import('../../platform/config.ts');
        const { createAccount } = await import('../../core/accounts/account.ts');
        const config = processConfig();
        const { accountsDeps } = await import('../accounts-deps.ts');
        const deps = await accountsDeps(config);
        try {
          const created = await createAccount(deps, {
            org: opts.org,
            tier: opts.tier as Tier,
            ...(opts.email ? { email: opts.email } : {}),
          });
          const out = {
            api_key: created.api_key,
            account_id: created.account.id,
            workspace_id: created.workspace_id,
            org: created.account.org,
            tier: created.account.tier,
          };
          if (!ctx.json)
            ctx.note('The API key is shown once: store it now (printf %s KEY | agenthost login).');
          printRecord(ctx, out, [
            ['org', out.org],
            ['tier', out.tier],
            ['account', out.account_id],
            ['workspace', out.workspace_id],
            ['api key', out.api_key],
          ]);
        } finally {
          await deps.store.close();
        }
      }),
    );
}
