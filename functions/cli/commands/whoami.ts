/** `agenthost whoami`: the account behind the key, its workspaces and the quotas left today. */
import type { Command } from 'commander';
import { isKeyWithPrefix } from '../api-key-prefix.ts';
import { printRecord } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { ownAccount } from '../own-account.ts';

export function registerWhoami(program: Command, cli: CliRuntime): void {
  program
    .command('whoami')
    .description('Show the account behind the key: org, tier, workspaces and the quotas left today')
    .addHelpText('after', ['', 'Example:', '  agenthost whoami --json'].join('\n'))
    .action(
      cli.action(async (ctx) => {
        const r = await ctx.resolve();
        const client = await ctx.client();
        const [{ workspaces }, usage, keys, me] = await Promise.all([
          client.workspaces.list(),
          client.usage.summary(),
          client.apiKeys.list(),
          ownAccount(client),
        ]);
        const personal = workspaces.find((w) => w.personal);
        const key = keys.api_keys.find((k) => isKeyWithPrefix(r.apiKey, k.prefix));
        const data = {
          url: r.url,
          profile: r.profileName,
          account_id: me?.account_id ?? null,
          org: me?.org ?? null,
          email: me?.email ?? null,
          tier: usage.quota.tier,
          key: key ? { id: key.id, name: key.name, prefix: key.prefix } : null,
          default_workspace: r.workspace ?? personal?.id ?? null,
          workspaces: workspaces.map((w) => ({ id: w.id, name: w.name, role: w.role, personal: w.personal })),
          quota: usage.quota,
          sandbox_quota: usage.sandbox_quota,
        };
        printRecord(ctx, data, [
          ['url', data.url],
          ['profile', data.profile],
          ['org', data.org],
          ['account', data.account_id],
          ['tier', data.tier],
          ['key', key ? `${key.name} (${key.prefix})` : null],
          ['workspace', data.default_workspace],
          [
            'workspaces',
            workspaces.map((w) => `${w.name} (${w.role}${w.personal ? ', personal' : ''})`).join(', '),
          ],
          ['calls left', `${usage.quota.remaining} of ${usage.quota.limit} today`],
          ['sandbox left', `${usage.sandbox_quota.remaining} of ${usage.sandbox_quota.limit} today`],
        ]);
      }),
    );
}
