/** `agenthost login`, `logout`, `whoami`: which platform and key the CLI uses (cli-config.ts). */
import type { Command } from 'commander';
import { CLIENT_ENV } from '../../shared/env-names.ts';
import { isKeyWithPrefix } from '../api-key-prefix.ts';
import { readConfigFile, writeConfigFile } from '../cli-config.ts';
import { checkApiKey, checkUrl, DEFAULT_URL } from '../cli-context.ts';
import { CliError, EXIT } from '../cli-errors.ts';
import { printRecord } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { ownAccount } from '../own-account.ts';
import { readSecretInput } from '../secret-input.ts';

export function registerAuth(program: Command, cli: CliRuntime): void {
  registerLogin(program, cli);
  registerLogout(program, cli);
  registerWhoami(program, cli);
}

/** `login`: checks a key against the platform, then saves it and the URL in a profile. */
function registerLogin(program: Command, cli: CliRuntime): void {
  program
    .command('login')
    .description(
      'Check an API key against the platform and save the URL and key in a profile (the config file is mode 0600)',
    )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  agenthost login --url https://api.example.com',
        '  printf %s "$AGENTHOST_API_KEY" | agenthost login --profile ci',
        'The key is read from a prompt on a terminal, else from stdin (never from an argument).',
        'The profile becomes the current one; --profile, AGENTHOST_PROFILE, --url, --api-key and the',
        'AGENTHOST_URL / AGENTHOST_API_KEY / AGENTHOST_WORKSPACE variables override it per command.',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx) => {
        const file = await readConfigFile(ctx.configPath);
        const name =
          ctx.options.profile ?? (ctx.io.env[CLIENT_ENV.profile] || undefined) ?? file.current ?? 'default';
        const previous = Object.hasOwn(file.profiles, name) ? file.profiles[name] : undefined;
        const url = checkUrl(
          ctx.options.url || ctx.io.env[CLIENT_ENV.url] || undefined || previous?.url || DEFAULT_URL,
        );
        const apiKey =
          ctx.options.apiKey ??
          (ctx.io.env[CLIENT_ENV.apiKey] || undefined) ??
          (await readSecretInput(ctx, 'API key'));
        checkApiKey(apiKey);
        // Checked before it is saved: a typo must not become the profile.
        const { createClient } = await import('../../../sdk/src/client.ts');
        const client = createClient({ baseUrl: url, apiKey, retry: false });
        const { workspaces } = await client.workspaces.list();
        const workspace = ctx.options.workspace ?? previous?.workspace;
        if (workspace && !workspaces.some((w) => w.id === workspace))
          throw new CliError(`the key’s account is not a member of workspace ${workspace}`, EXIT.notFound);
        file.profiles[name] = { url, api_key: apiKey, ...(workspace ? { workspace } : {}) };
        file.current = name;
        await writeConfigFile(ctx.configPath, file);
        printRecord(ctx, { profile: name, url, config: ctx.configPath, workspaces: workspaces.length }, [
          ['profile', name],
          ['url', url],
          ['config', ctx.configPath],
        ]);
      }),
    );
}

/** `logout`: removes the profile's key from the config file. */
function registerLogout(program: Command, cli: CliRuntime): void {
  program
    .command('logout')
    .description(
      'Remove the profile’s API key from the config file (the key itself stays valid: revoke it with `keys revoke`)',
    )
    .addHelpText('after', ['', 'Example:', '  agenthost logout --profile ci'].join('\n'))
    .action(
      cli.action(async (ctx) => {
        const file = await readConfigFile(ctx.configPath);
        const name = await ctx.profileName();
        const profile = file.profiles[name];
        if (!profile?.api_key) {
          ctx.note(`profile ${name} holds no key`);
          return;
        }
        delete profile.api_key;
        await writeConfigFile(ctx.configPath, file);
        ctx.note(`removed the key of profile ${name} from ${ctx.configPath}`);
      }),
    );
}

/** `whoami`: the account behind the key, its workspaces and the quotas left today. */
function registerWhoami(program: Command, cli: CliRuntime): void {
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
