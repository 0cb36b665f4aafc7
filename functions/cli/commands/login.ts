/** `agenthost login`: checks a key against the platform and saves it in a profile (cli-config.ts). */
import type { Command } from 'commander';
import { CLIENT_ENV } from '../../shared/env-names.ts';
import { readConfigFile, writeConfigFile } from '../cli-config.ts';
import { checkApiKey, checkUrl, DEFAULT_URL } from '../cli-context.ts';
import { CliError, EXIT } from '../cli-errors.ts';
import { printRecord } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { readSecretInput } from '../secret-input.ts';

export function registerLogin(program: Command, cli: CliRuntime): void {
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
