/**
 * `agenthost invitations …`: the invited account's side of workspace invitations. An owner's
 * `workspaces invite` makes only an invitation; the account it is addressed to lists it here and
 * accepts it (then it is a member) or declines it (docs/roles.md).
 * One file a command, each added to the group in this order.
 */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { registerInvitationAccept } from './accept.ts';
import { registerInvitationDecline } from './decline.ts';
import { registerInvitationList } from './list.ts';

export function registerInvitations(program: Command, cli: CliRuntime): void {
  const invitations = program
    .command('invitations')
    .description('Invitations to workspaces addressed to you: list, accept, decline');
  registerInvitationList(invitations, cli);
  registerInvitationAccept(invitations, cli);
  registerInvitationDecline(invitations, cli);
}
