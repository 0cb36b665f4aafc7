/** `agenthost agents delete-check`: show what deleting a version (or all versions) would touch: pinned dependents, schedules, services. */
import type { Command } from 'commander';
import { findOwnAgent } from '../../agent-ref.ts';
import { printRecord } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';

export function registerAgentDeleteCheck(agents: Command, cli: CliRuntime): void {
  agents
    .command('delete-check')
    .description(
      'Show what deleting a version (or all versions) would touch: pinned dependents, schedules, services',
    )
    .argument('<agent>', 'an id, org/name or org/name@v2')
    .option('--all-versions', 'check deleting every version')
    .addHelpText(
      'after',
      ['', 'Example:', '  agenthost agents delete-check acme/triage --all-versions'].join('\n'),
    )
    .action(
      cli.action(async (ctx, ref: string, opts: { allVersions?: boolean }) => {
        const client = await ctx.client();
        const agent = await findOwnAgent(client, ref);
        const check = await client.agents.deleteCheck(agent.id);
        const impact = opts.allVersions ? check.all_versions : check;
        printRecord(ctx, check, [
          ['agent', check.ref],
          ['versions', opts.allVersions ? check.versions.join(', ') : check.ref],
          ['dependents', impact.dependents.join(', ') || 'none'],
          ['schedules', impact.schedules.join(', ') || 'none'],
          ['services', impact.services.join(', ') || 'none'],
          [
            'can delete',
            impact.can_delete
              ? 'yes'
              : `with ${impact.confirmation.includes('force') ? '--force' : 'confirmation'}`,
          ],
        ]);
      }),
    );
}
