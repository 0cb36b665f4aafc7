/** `agenthost agents fork`: copy an agent version (yours or a public one) into a workspace as a new private agent. */
import type { Command } from 'commander';
import { findOwnAgent, resolveAgentRef } from '../../agent-ref.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { type AgentRecord, showAgent } from './agent-view.ts';

export function registerAgentFork(agents: Command, cli: CliRuntime): void {
  agents
    .command('fork')
    .description('Copy an agent version (yours or a public one) into a workspace as a new private agent')
    .argument('<agent>', 'an id, org/name or org/name@v2')
    .option('--name <name>', 'the fork’s name (default: the same name)')
    .option('--public', 'list the fork in the public directory')
    .addHelpText(
      'after',
      ['', 'Example:', '  agenthost agents fork acme/triage@v2 --name my-triage'].join('\n'),
    )
    .action(
      cli.action(async (ctx, ref: string, opts: { name?: string; public?: boolean }) => {
        const client = await ctx.client();
        const id = await findOwnAgent(client, ref)
          .then((a) => a.id)
          .catch(async () => {
            const address = await resolveAgentRef(client, ref);
            return (await client.public.get(address.org, address.agent, address.version)).id;
          });
        const chosen = (await ctx.resolve()).workspace;
        const fork = await client.agents.fork(id, {
          ...(opts.name ? { new_name: opts.name } : {}),
          ...(chosen ? { workspace_id: chosen } : {}),
          ...(opts.public ? { is_public: true } : {}),
        });
        showAgent(ctx, fork as AgentRecord);
      }),
    );
}
