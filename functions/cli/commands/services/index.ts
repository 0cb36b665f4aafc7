/**
 * `agenthost services …`: always-on services (docs/services.md). deploy waits until the app runs
 * and prints its URL; restart and update wait the same way; logs reads the app's output with the
 * agent logs' reader (log-follow.ts). A service is named by its id or its name in the workspace.
 * This file makes the group; each command has a file, added in this order.
 */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { registerServiceDelete } from './delete.ts';
import { registerServiceDeploy } from './deploy.ts';
import { registerServiceGet } from './get.ts';
import { registerServiceList } from './list.ts';
import { registerServiceLogs } from './logs.ts';
import { registerServiceRestart } from './restart.ts';
import { registerServiceUpdate } from './update.ts';

export function registerServices(program: Command, cli: CliRuntime): void {
  const services = program
    .command('services')
    .description(
      'Always-on services: deploy an agent’s app with a URL, read its logs, restart and update it',
    );
  registerServiceDeploy(services, cli);
  registerServiceList(services, cli);
  registerServiceGet(services, cli);
  registerServiceLogs(services, cli);
  registerServiceRestart(services, cli);
  registerServiceUpdate(services, cli);
  registerServiceDelete(services, cli);
}
