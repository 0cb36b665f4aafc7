/** `agenthost agents versions`: list every live version of one of your agents. */
import type { Command } from 'commander';
import { findOwnAgent } from '../../agent-ref.ts';
import { printList } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import type { AgentRecord } from './agent-view.ts';

export function registerAgentVersions(agents: Command, cli: CliRuntime): void {
  agents
    .command('versions')
    .description('List every live version of one of your agents')
    .argument('<agent>', 'org/name')
    .addHelpText('after', ['', 'Example:', '  agenthost agents versions acme/triage'].join('\n'))
    .action(
      cli.action(async (ctx, ref: string) => {
        const client = await ctx.client();
        const latest = await findOwnAgent(client, ref);
        const { agents: all } = await client.agents.list({ name: latest.name, limit: 200 });
        const versions = all.filter((a) => a.org === latest.org && a.name === latest.name);
        printList(ctx, { agents: versions }, versions, [
          { header: 'VERSION', value: (a: AgentRecord) => a.version },
          { header: 'STATUS', value: (a: AgentRecord) => a.status },
          { header: 'CREATED', value: (a: AgentRecord) => a.created_at },
          { header: 'DEPRECATED', value: (a: AgentRecord) => a.deprecated_at },
          { header: 'SUNSET', value: (a: AgentRecord) => a.sunset_at },
          { header: 'ID', value: (a: AgentRecord) => a.id },
        ]);
      }),
    );
}
