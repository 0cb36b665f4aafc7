/** `agenthost workspaces list`: list the workspaces you belong to, with your role in each; * marks the one commands use. */
import type { Command } from 'commander';
import { printList } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import type { Workspace } from './workspace-ref.ts';

export function registerWorkspaceList(workspaces: Command, cli: CliRuntime): void {
  workspaces
    .command('list')
    .description('List the workspaces you belong to, with your role in each; * marks the one commands use')
    .addHelpText('after', ['', 'Example:', '  agenthost workspaces list --json'].join('\n'))
    .action(
      cli.action(async (ctx) => {
        const client = await ctx.client();
        const page = await client.workspaces.list();
        const chosen = (await ctx.resolve()).workspace;
        const current = chosen ?? page.workspaces.find((w) => w.personal)?.id;
        printList(
          ctx,
          page,
          page.workspaces,
          [
            { header: '', value: (w: Workspace) => (w.id === current ? '*' : '') },
            { header: 'ID', value: (w: Workspace) => w.id },
            { header: 'NAME', value: (w: Workspace) => w.name },
            { header: 'SLUG', value: (w: Workspace) => w.slug },
            { header: 'ROLE', value: (w: Workspace) => w.role },
            { header: 'PERSONAL', value: (w: Workspace) => (w.personal ? 'yes' : 'no') },
            { header: 'CREATED', value: (w: Workspace) => w.created_at },
          ],
          'no workspaces',
        );
      }),
    );
}
