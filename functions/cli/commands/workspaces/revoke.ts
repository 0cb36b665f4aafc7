/** `agenthost workspaces revoke`: withdraw a pending invitation of the workspace (owners). */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';

export function registerWorkspaceRevoke(workspaces: Command, cli: CliRuntime): void {
  workspaces
    .command('revoke')
    .description('Withdraw a pending invitation of the workspace (owners)')
    .argument('<invitation>', 'the invitation’s id (agenthost workspaces invitations lists them)')
    .addHelpText(
      'after',
      '\nExample:\n  agenthost workspaces revoke 0b6c3f0e-5d2a-8c41-9e7f-2a4b6c8d0e1f -w acme-research',
    )
    .action(
      cli.action(async (ctx, invitation: string) => {
        const client = await ctx.client();
        const workspace = await ctx.workspace(client);
        await client.workspaces.revokeInvitation(workspace, invitation);
        if (ctx.json) ctx.out(JSON.stringify({ revoked: invitation, workspace_id: workspace }, null, 2));
        else ctx.note(`revoked invitation ${invitation} of workspace ${workspace}`);
      }),
    );
}
