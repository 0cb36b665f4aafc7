/** `agenthost agents get`: show one agent version. */
import type { Command } from 'commander';
import { findOwnAgent } from '../../agent-ref.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { showAgent } from './agent-view.ts';

export function registerAgentGet(agents: Command, cli: CliRuntime): void {
  agents
    .command('get')
    .description('Show one agent version')
    .argument('<agent>', 'an id, org/name (the newest version) or org/name@v2')
    .addHelpText('after', ['', 'Example:', '  agenthost agents get acme/triage@v2'].join('\n'))
    .action(
      cli.action(async (ctx, ref: string) => showAgent(ctx, await findOwnAgent(await ctx.client(), ref))),
    );
}
