/**
 * `agenthost runs …`: the calls started without waiting (`agenthost call --async`; docs/runs.md):
 * list them, show one, follow its events to its end, cancel it; make the secret their completion
 * webhooks are signed with.
 * One file a command, each added to the group in this order.
 */
import type { Command } from 'commander';
import type { CliRuntime } from '../../cli-runtime.ts';
import { registerRunCancel } from './cancel.ts';
import { registerRunFollow } from './follow.ts';
import { registerRunGet } from './get.ts';
import { registerRunList } from './list.ts';
import { registerRunWebhookSecret } from './webhook-secret.ts';

export function registerRuns(program: Command, cli: CliRuntime): void {
  const runs = program
    .command('runs')
    .description('Your calls started with call --async: list, get, follow, cancel; their webhooks’ secret');
  registerRunList(runs, cli);
  registerRunGet(runs, cli);
  registerRunFollow(runs, cli);
  registerRunCancel(runs, cli);
  registerRunWebhookSecret(runs, cli);
}
