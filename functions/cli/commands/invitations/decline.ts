/** `agenthost invitations decline`: decline an invitation: it is deleted, and you do not join. */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';

export function registerInvitationDecline(invitations: Command, cli: CliRuntime): void {
  invitations
    .command('decline')
    .description('Decline an invitation: it is deleted, and you do not join')
    .argument('<invitation>', 'the invitation’s id')
    .addHelpText('after', '\nExample:\n  agenthost invitations decline 0b6c3f0e-5d2a-8c41-9e7f-2a4b6c8d0e1f')
    .action(
      cli.action(async (ctx, id: string) => {
        const client = await ctx.client();
        await client.invitations.decline(id);
        if (ctx.json) ctx.out(JSON.stringify({ declined: id }, null, 2));
        else ctx.note(`declined invitation ${id}`);
      }),
    );
}
