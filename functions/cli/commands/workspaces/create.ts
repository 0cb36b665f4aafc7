/** `agenthost workspaces create`: create a workspace; you become its owner. */
import type { Command } from 'commander';
import { printRecord } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';

export function registerWorkspaceCreate(workspaces: Command, cli: CliRuntime): void {
  workspaces
    .command('create')
    .description('Create a workspace; you become its owner')
    .argument('<name>', 'its display name')
    .option('--slug <slug>', 'its globally unique slug, the org of its agents (default: from the name)')
    .addHelpText('after', '\nExample:\n  agenthost workspaces create "Acme Research" --slug acme-research')
    .action(
      cli.action(async (ctx, name: string, opts: { slug?: string }) => {
        const client = await ctx.client();
        const created = await client.workspaces.create({ name, ...(opts.slug ? { slug: opts.slug } : {}) });
        printRecord(ctx, created, [
          ['id', created.id],
          ['name', created.name],
          ['slug', created.slug],
          ['role', created.role],
          ['created', created.created_at],
        ]);
        if (!ctx.json) ctx.note(`make it the default with: agenthost workspaces use ${created.id}`);
      }),
    );
}
