/** `agenthost logs` (a top-level command, of the agents group's file set): show an agent version’s execution logs, newest last; --follow keeps printing. */
import type { Command } from 'commander';
import { findOwnAgent } from '../../agent-ref.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { type LogFlags, showLogs } from '../../log-follow.ts';
import { logOptions } from './agent-view.ts';

export function registerAgentLogs(program: Command, cli: CliRuntime): void {
  logOptions(
    program
      .command('logs')
      .description('Show an agent version’s execution logs, newest last; --follow keeps printing')
      .argument('<agent>', 'an id, org/name (the newest version) or org/name@v2')
      .addHelpText(
        'after',
        [
          '',
          'Examples:',
          '  agenthost logs acme/triage@v2 --level warn --since 2026-06-01T00:00:00Z',
          '  agenthost logs acme/triage --follow',
        ].join('\n'),
      ),
  ).action(
    cli.action(async (ctx, ref: string, flags: LogFlags) => {
      const client = await ctx.client();
      const agent = await findOwnAgent(client, ref);
      await showLogs(ctx, (query) => client.agents.logs(agent.id, query), flags);
    }),
  );
}
