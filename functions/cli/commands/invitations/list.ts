/** `agenthost invitations list`: list the pending invitations addressed to you (by account id or by your email), oldest first. */
import type { Command } from 'commander';
import { printList } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { noteMore, type PageFlags, pageOptions, readPages } from '../../paging.ts';
import { invitationColumns } from './invitation-view.ts';

export function registerInvitationList(invitations: Command, cli: CliRuntime): void {
  pageOptions(
    invitations
      .command('list')
      .description(
        'List the pending invitations addressed to you (by account id or by your email), oldest first',
      )
      .addHelpText('after', '\nExample:\n  agenthost invitations list --all --json'),
    'invitations',
  ).action(
    cli.action(async (ctx, flags: PageFlags) => {
      const client = await ctx.client();
      const { items, total } = await readPages(flags, async (page) => {
        const answer = await client.invitations.list(page);
        return { items: answer.invitations, total: answer.total };
      });
      printList(ctx, { invitations: items, total }, items, invitationColumns, 'no pending invitations');
      noteMore(ctx, flags, items.length, total);
    }),
  );
}
