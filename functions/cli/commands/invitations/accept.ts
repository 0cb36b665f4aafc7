/** `agenthost invitations accept`: accept an invitation: you become a member of its workspace with its role. */
import type { Command } from 'commander';
import { printRecord } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';

export function registerInvitationAccept(invitations: Command, cli: CliRuntime): void {
  invitations
    .command('accept')
    .description('Accept an invitation: you become a member of its workspace with its role')
    .argument('<invitation>', 'the invitation’s id (agenthost invitations list shows them)')
    .addHelpText('after', '\nExample:\n  agenthost invitations accept 0b6c3f0e-5d2a-8c41-9e7f-2a4b6c8d0e1f')
    .action(
      cli.action(async (ctx, id: string) => {
        const client = await ctx.client();
        const joined = await client.invitations.accept(id);
        printRecord(ctx, joined, [
          ['workspace', joined.id],
          ['name', joined.name],
          ['slug', joined.slug],
          ['role', joined.role],
        ]);
        if (!ctx.json) ctx.note(`make it the default with: agenthost workspaces use ${joined.slug}`);
      }),
    );
}
