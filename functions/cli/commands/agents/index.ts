/** `agenthost agents …` and `agenthost logs AGENT`: the caller's agents and their execution logs.
 * One file a command, each added in this order.
 */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { registerAgentDelete } from './delete.ts';
import { registerAgentDeleteCheck } from './delete-check.ts';
import { registerAgentFork } from './fork.ts';
import { registerAgentGet } from './get.ts';
import { registerAgentList } from './list.ts';
import { registerAgentLogs } from './logs.ts';
import { registerAgentVersions } from './versions.ts';

export function registerAgents(program: Command, cli: CliRuntime): void {
  const agents = program
    .command('agents')
    .description('Your agents: list, inspect, fork and delete versions');
  registerAgentList(agents, cli);
  registerAgentGet(agents, cli);
  registerAgentVersions(agents, cli);
  registerAgentDeleteCheck(agents, cli);
  registerAgentDelete(agents, cli);
  registerAgentFork(agents, cli);
  registerAgentLogs(program, cli);
}
