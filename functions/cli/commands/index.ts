/** Every command group of the CLI, one file each (docs/cli.md is generated from their help). */
import type { Command } from 'commander';
import type { CliRuntime } from '../cli-runtime.ts';
import { registerAccounts } from './accounts.ts';
import { registerAgents } from './agents.ts';
import { registerAuth } from './auth.ts';
import { registerCall } from './call.ts';
import { registerCompletion } from './completion.ts';
import { registerInit } from './init.ts';
import { registerPublish } from './publish.ts';
import { registerRun } from './run.ts';
import { registerStart } from './start.ts';

export function registerCommands(program: Command, cli: CliRuntime): void {
  registerStart(program, cli);
  registerAccounts(program, cli);
  registerAuth(program, cli);
  registerInit(program, cli);
  registerRun(program, cli);
  registerPublish(program, cli);
  registerCall(program, cli);
  registerAgents(program, cli);
  registerCompletion(program, cli);
}
