/** `agenthost workspaces invite`: invite an account (by id) or an email to the workspace (owners): it joins when it accepts the invitation. */
import { type Command, Option } from 'commander';
import { ROLES } from '../../../core/workspaces/roles.ts';
import { printRecord } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';

export function registerWorkspaceInvite(workspaces: Command, cli: CliRuntime): void {
  workspaces
    .command('invite')
    .description(
      'Invite an account (by id) or an email to the workspace (owners): it joins when it accepts the invitation',
    )
    .argument('<account>', 'the account’s id, or an email')
    .addOption(new Option('--role <role>', 'the role it gets').choices(ROLES).default('member'))
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  agenthost workspaces invite ada@example.com -w WORKSPACE_ID',
        '  agenthost workspaces invite 6f1d2c34-0c1e-4b7a-9f51-3a1e2b9c0d11 --role owner',
        'The invited account accepts with: agenthost invitations accept INVITATION_ID',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, account: string, opts: { role: (typeof ROLES)[number] }) => {
        const client = await ctx.client();
        const workspace = await ctx.workspace(client);
        const invitation = await client.workspaces.invite(workspace, {
          ...(account.includes('@') ? { email: account } : { account_id: account }),
          role: opts.role,
        });
        printRecord(ctx, invitation, [
          ['invitation', invitation.id],
          ['invited', invitation.account_id ?? invitation.email],
          ['role', invitation.role],
          ['workspace', workspace],
          ['expires', invitation.expires_at],
        ]);
        if (!ctx.json)
          ctx.note(`pending until it is accepted: agenthost invitations accept ${invitation.id}`);
      }),
    );
}
