/** `agenthost agents list`: list the agent versions of your workspaces (newest version first). */
import type { Command } from 'commander';
import { printList } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { type AgentRecord, agentColumns } from './agent-view.ts';

export function registerAgentList(agents: Command, cli: CliRuntime): void {
  agents
    .command('list')
    .description('List the agent versions of your workspaces (newest version first)')
    .option('--name <name>', 'only this agent name')
    .option('--all', 'every page, not only the first 50')
    .addHelpText('after', ['', 'Example:', '  agenthost agents list --name triage --all --json'].join('\n'))
    .action(
      cli.action(async (ctx, opts: { name?: string; all?: boolean }) => {
        const client = await ctx.client();
        const chosen = (await ctx.resolve()).workspace;
        const query = {
          ...(opts.name ? { name: opts.name } : {}),
          ...(chosen ? { workspace_id: chosen } : {}),
        };
        if (opts.all) {
          const all: AgentRecord[] = [];
          for await (const a of client.agents.iterate(query, 200)) all.push(a);
          printList(ctx, { agents: all, total: all.length }, all, agentColumns, 'no agents');
          return;
        }
        const page = await client.agents.list(query);
        printList(ctx, page, page.agents, agentColumns, 'no agents');
        if (!ctx.json && page.total > page.agents.length)
          ctx.note(`(${page.total} in all: --all to list every one)`);
      }),
    );
}
