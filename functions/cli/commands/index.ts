/**
 * Every command of the CLI: a top-level command is a file; a group is a directory whose index.ts
 * makes the group and whose commands have a file each (docs/cli.md is generated from their help).
 */
import type { Command } from 'commander';
import type { CliRuntime } from '../cli-runtime.ts';
import { registerAccounts } from './accounts.ts';
import { registerAgents } from './agents/index.ts';
import { registerBilling } from './billing/index.ts';
import { registerCall } from './call.ts';
import { registerCompletion } from './completion.ts';
import { registerInit } from './init.ts';
import { registerInvitations } from './invitations/index.ts';
import { registerKeys } from './keys/index.ts';
import { registerLogin } from './login.ts';
import { registerLogout } from './logout.ts';
import { registerPublish } from './publish.ts';
import { registerRun } from './run.ts';
import { registerRuns } from './runs/index.ts';
import { registerSchedules } from './schedules/index.ts';
import { registerSecrets } from './secrets/index.ts';
import { registerServices } from './services/index.ts';
import { registerStart } from './start.ts';
import { registerTasks } from './tasks/index.ts';
import { registerUsage } from './usage.ts';
import { registerWhoami } from './whoami.ts';
import { registerWorkspaces } from './workspaces/index.ts';

export function registerCommands(program: Command, cli: CliRuntime): void {
  registerStart(program, cli);
  registerAccounts(program, cli);
  registerLogin(program, cli);
  registerLogout(program, cli);
  registerWhoami(program, cli);
  registerInit(program, cli);
  registerRun(program, cli);
  registerPublish(program, cli);
  registerCall(program, cli);
  registerRuns(program, cli);
  registerAgents(program, cli);
  registerSchedules(program, cli);
  registerServices(program, cli);
  registerWorkspaces(program, cli);
  registerInvitations(program, cli);
  registerSecrets(program, cli);
  registerKeys(program, cli);
  registerTasks(program, cli);
  registerUsage(program, cli);
  registerBilling(program, cli);
  registerCompletion(program, cli);
}
