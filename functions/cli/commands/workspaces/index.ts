/**
 * `agenthost workspaces …`: the workspaces the caller belongs to, their members, invitations, and
 * removal and leaving, and `use`, which makes one the profile's default so workspace-scoped
 * commands act in it without -w. One file a command, each added to the group in this order.
 */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { registerWorkspaceCreate } from './create.ts';
import { registerWorkspaceInvitations } from './invitations.ts';
import { registerWorkspaceInvite } from './invite.ts';
import { registerWorkspaceLeave } from './leave.ts';
import { registerWorkspaceList } from './list.ts';
import { registerWorkspaceMembers } from './members.ts';
import { registerWorkspaceRemove } from './remove.ts';
import { registerWorkspaceRevoke } from './revoke.ts';
import { registerWorkspaceUse } from './use.ts';

export function registerWorkspaces(program: Command, cli: CliRuntime): void {
  const workspaces = program
    .command('workspaces')
    .description('Your workspaces: list, create, members, invitations, and the default one (use)');
  registerWorkspaceList(workspaces, cli);
  registerWorkspaceCreate(workspaces, cli);
  registerWorkspaceMembers(workspaces, cli);
  registerWorkspaceInvite(workspaces, cli);
  registerWorkspaceInvitations(workspaces, cli);
  registerWorkspaceRevoke(workspaces, cli);
  registerWorkspaceRemove(workspaces, cli);
  registerWorkspaceLeave(workspaces, cli);
  registerWorkspaceUse(workspaces, cli);
}
