/** `agenthost workspaces use`: make a workspace the current profile’s default (written to the config file). */
import type { Command } from 'commander';
import { CLIENT_ENV } from '../../../shared/env-names.ts';
import { readConfigFile, writeConfigFile } from '../../cli-config.ts';
import { printRecord } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { findWorkspace } from './workspace-ref.ts';

export function registerWorkspaceUse(workspaces: Command, cli: CliRuntime): void {
  workspaces
    .command('use')
    .description('Make a workspace the current profile’s default (written to the config file)')
    .argument('<workspace>', 'a workspace id or slug you are a member of')
    .addHelpText(
      'after',
      [
        '',
        'Example:',
        '  agenthost workspaces use acme-research',
        '-w/--workspace and AGENTHOST_WORKSPACE still override it per command.',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, ref: string) => {
        const client = await ctx.client();
        const workspace = await findWorkspace(client, ref);
        const resolved = await ctx.resolve();
        // Read afresh: the context's copy may predate this command.
        const file = await readConfigFile(ctx.configPath);
        const profile = file.profiles[resolved.profileName] ?? { url: resolved.url };
        profile.workspace = workspace.id;
        file.profiles[resolved.profileName] = profile;
        await writeConfigFile(ctx.configPath, file);
        printRecord(
          ctx,
          {
            profile: resolved.profileName,
            workspace_id: workspace.id,
            name: workspace.name,
            config: ctx.configPath,
          },
          [
            ['profile', resolved.profileName],
            ['workspace', workspace.id],
            ['name', workspace.name],
            ['config', ctx.configPath],
          ],
        );
        const envWorkspace = ctx.io.env[CLIENT_ENV.workspace];
        if (envWorkspace && envWorkspace !== workspace.id)
          ctx.note(`warning: ${CLIENT_ENV.workspace}=${envWorkspace} still overrides it in this shell`);
      }),
    );
}
