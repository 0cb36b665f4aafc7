/** `agenthost workspaces members`: list a workspace’s members (default: the workspace commands use). */
import type { Command } from 'commander';
import { printList } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { findWorkspace, type Member } from './workspace-ref.ts';

export function registerWorkspaceMembers(workspaces: Command, cli: CliRuntime): void {
  workspaces
    .command('members')
    .description('List a workspace’s members (default: the workspace commands use)')
    .argument('[workspace]', 'a workspace id or slug (default: -w, the profile’s, else the personal one)')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  agenthost workspaces members',
        '  agenthost workspaces members acme-research --json',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, ref: string | undefined) => {
        const client = await ctx.client();
        const id = ref ? (await findWorkspace(client, ref)).id : await ctx.workspace(client);
        const page = await client.workspaces.members(id);
        printList(
          ctx,
          page,
          page.members,
          [
            { header: 'ACCOUNT', value: (m: Member) => m.account_id },
            { header: 'ORG', value: (m: Member) => m.org },
            { header: 'EMAIL', value: (m: Member) => m.email },
            { header: 'ROLE', value: (m: Member) => m.role },
            { header: 'JOINED', value: (m: Member) => m.joined_at },
          ],
          'no members',
        );
      }),
    );
}
