/** `agenthost agents delete`: delete a version, or every version with --all-versions. */
import type { Command } from 'commander';
import { findOwnAgent } from '../../agent-ref.ts';
import type { CliRuntime } from '../../cli-runtime.ts';

export function registerAgentDelete(agents: Command, cli: CliRuntime): void {
  agents
    .command('delete')
    .description('Delete a version, or every version with --all-versions')
    .argument('<agent>', 'an id, org/name@v2 (or org/name with --all-versions)')
    .option('--all-versions', 'delete every version of the agent')
    .option('--force', 'delete even when other agents pin it or schedules and services run it')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  agenthost agents delete acme/triage@v1',
        '  agenthost agents delete acme/triage --all-versions --force',
        'Run `agenthost agents delete-check` first to see what it would touch.',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, ref: string, opts: { allVersions?: boolean; force?: boolean }) => {
        const client = await ctx.client();
        const agent = await findOwnAgent(client, ref);
        const result = await client.agents.delete(agent.id, {
          mode: opts.allVersions ? 'all_versions' : 'version',
          ...(opts.force ? { force: 'true' } : {}),
        });
        if (ctx.json) ctx.out(JSON.stringify(result ?? { deleted: agent.id }, null, 2));
        else
          ctx.note(
            `deleted ${opts.allVersions ? `every version of ${agent.org}/${agent.name}` : `${agent.org}/${agent.name}@${agent.version}`}`,
          );
      }),
    );
}
