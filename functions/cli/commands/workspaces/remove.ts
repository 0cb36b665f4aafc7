/** `agenthost workspaces remove`: remove a member from the workspace (owners); the last owner cannot be removed. */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';

export function registerWorkspaceRemove(workspaces: Command, cli: CliRuntime): void {
  workspaces
    .command('remove')
    .description('Remove a member from the workspace (owners); the last owner cannot be removed')
    .argument('<account>', 'the member’s account id (agenthost workspaces members lists them)')
    .addHelpText(
      'after',
      '\nExample:\n  agenthost workspaces remove 6f1d2c34-0c1e-4b7a-9f51-3a1e2b9c0d11 -w acme-research',
    )
    .action(
      cli.action(async (ctx, account: string) => {
        const client = await ctx.client();
        const workspace = await ctx.workspace(client);
        await client.workspaces.removeMember(workspace, account);
        if (ctx.json) ctx.out(JSON.stringify({ removed: account, workspace_id: workspace }, null, 2));
        else ctx.note(`removed ${account} from workspace ${workspace}`);
      }),
    );
}
