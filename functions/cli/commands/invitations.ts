/**
 * `agenthost invitations …`: the invited account's side of workspace invitations. An owner's
 * `workspaces invite` makes only an invitation; the account it is addressed to lists it here and
 * accepts it (then it is a member) or declines it (docs/roles.md).
 */
import type { Command } from 'commander';
import type { Client } from '../cli-context.ts';
import { printList, printRecord } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { noteMore, type PageFlags, pageOptions, readPages } from '../paging.ts';

export type Invitation = Awaited<ReturnType<Client['invitations']['list']>>['invitations'][number];

/** The columns of an invitation list, the invited account's and the owners' alike. */
export const invitationColumns = [
  { header: 'ID', value: (i: Invitation) => i.id },
  { header: 'WORKSPACE', value: (i: Invitation) => i.workspace.slug },
  { header: 'INVITED', value: (i: Invitation) => i.account_id ?? i.email },
  { header: 'ROLE', value: (i: Invitation) => i.role },
  { header: 'BY', value: (i: Invitation) => i.invited_by.org ?? i.invited_by.account_id },
  { header: 'EXPIRES', value: (i: Invitation) => i.expires_at },
];

export function registerInvitations(program: Command, cli: CliRuntime): void {
  const invitations = program
    .command('invitations')
    .description('Invitations to workspaces addressed to you: list, accept, decline');

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
