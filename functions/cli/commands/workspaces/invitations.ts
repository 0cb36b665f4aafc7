/** `agenthost workspaces invitations`: list a workspace’s pending invitations, oldest first (owners). */
import type { Command } from 'commander';
import { printList } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { noteMore, type PageFlags, pageOptions, readPages } from '../../paging.ts';
import { invitationColumns } from '../invitations/invitation-view.ts';
import { findWorkspace } from './workspace-ref.ts';

export function registerWorkspaceInvitations(workspaces: Command, cli: CliRuntime): void {
  pageOptions(
    workspaces
      .command('invitations')
      .description('List a workspace’s pending invitations, oldest first (owners)')
      .argument('[workspace]', 'a workspace id or slug (default: -w, the profile’s, else the personal one)')
      .addHelpText('after', '\nExample:\n  agenthost workspaces invitations acme-research --all'),
    'invitations',
  ).action(
    cli.action(async (ctx, ref: string | undefined, flags: PageFlags) => {
      const client = await ctx.client();
      const id = ref ? (await findWorkspace(client, ref)).id : await ctx.workspace(client);
      const { items, total } = await readPages(flags, async (page) => {
        const answer = await client.workspaces.invitations(id, page);
        return { items: answer.invitations, total: answer.total };
      });
      printList(ctx, { invitations: items, total }, items, invitationColumns, 'no pending invitations');
      noteMore(ctx, flags, items.length, total);
    }),
  );
}
