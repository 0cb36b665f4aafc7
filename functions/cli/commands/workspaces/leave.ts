/** `agenthost workspaces leave`: leave the workspace (any member); its last owner cannot leave. */
import type { Command } from 'commander';
import { CliError, EXIT } from '../../cli-errors.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { ownAccount } from '../../own-account.ts';

export function registerWorkspaceLeave(workspaces: Command, cli: CliRuntime): void {
  workspaces
    .command('leave')
    .description('Leave the workspace (any member); its last owner cannot leave')
    .addHelpText('after', '\nExample:\n  agenthost workspaces leave -w acme-research')
    .action(
      cli.action(async (ctx) => {
        const client = await ctx.client();
        const workspace = await ctx.workspace(client);
        const me = await ownAccount(client);
        if (!me)
          throw new CliError('this key reaches no personal workspace to tell its account', EXIT.notFound);
        await client.workspaces.removeMember(workspace, me.account_id);
        if (ctx.json) ctx.out(JSON.stringify({ left: workspace, account_id: me.account_id }, null, 2));
        else ctx.note(`left workspace ${workspace}`);
      }),
    );
}
