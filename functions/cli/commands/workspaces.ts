/**
 * `agenthost workspaces …`: the workspaces the caller belongs to, their members, invitations, and
 * removal and leaving, and `use`, which makes one the profile's default so workspace-scoped
 * commands act in it without -w.
 */
import { type Command, Option } from 'commander';
import { ROLES } from '../../core/workspaces/roles.ts';
import { CLIENT_ENV } from '../../shared/env-names.ts';
import { readConfigFile, writeConfigFile } from '../cli-config.ts';
import type { Client } from '../cli-context.ts';
import { CliError, EXIT } from '../cli-errors.ts';
import { printList, printRecord } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { ownAccount } from '../own-account.ts';
import { noteMore, type PageFlags, pageOptions, readPages } from '../paging.ts';
import { invitationColumns } from './invitations.ts';

type Workspace = Awaited<ReturnType<Client['workspaces']['list']>>['workspaces'][number];
type Member = Awaited<ReturnType<Client['workspaces']['members']>>['members'][number];

/** The caller's workspace with this id or slug; not a member is "not found", as the API answers. */
async function findWorkspace(client: Client, ref: string): Promise<Workspace> {
  const { workspaces } = await client.workspaces.list();
  const found = workspaces.find((w) => w.id === ref) ?? workspaces.find((w) => w.slug === ref);
  if (!found)
    throw new CliError(
      `you are not a member of a workspace ${ref}`,
      EXIT.notFound,
      'agenthost workspaces list shows yours',
    );
  return found;
}

export function registerWorkspaces(program: Command, cli: CliRuntime): void {
  const workspaces = program
    .command('workspaces')
    .description('Your workspaces: list, create, members, invitations, and the default one (use)');

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

  workspaces
    .command('members')
    .description('List a workspace’s members (default: the workspace commands use)')
    .argument('[workspace]', 'a workspace id or slug (default: -w, the profile’s, else the personal one)')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  agenthost workspaces members',
        '  agenthost workspaces members acme-research --json',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, ref: string | undefined) => {
        const client = await ctx.client();
        const id = ref ? (await findWorkspace(client, ref)).id : await ctx.workspace(client);
        const page = await client.workspaces.members(id);
        printList(
          ctx,
          page,
          page.members,
          [
            { header: 'ACCOUNT', value: (m: Member) => m.account_id },
            { header: 'ORG', value: (m: Member) => m.org },
            { header: 'EMAIL', value: (m: Member) => m.email },
            { header: 'ROLE', value: (m: Member) => m.role },
            { header: 'JOINED', value: (m: Member) => m.joined_at },
          ],
          'no members',
        );
      }),
    );

  workspaces
    .command('invite')
    .description(
      'Invite an account (by id) or an email to the workspace (owners): it joins when it accepts the invitation',
    )
    .argument('<account>', 'the account’s id, or an email')
    .addOption(new Option('--role <role>', 'the role it gets').choices(ROLES).default('member'))
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  agenthost workspaces invite ada@example.com -w WORKSPACE_ID',
        '  agenthost workspaces invite 6f1d2c34-0c1e-4b7a-9f51-3a1e2b9c0d11 --role owner',
        'The invited account accepts with: agenthost invitations accept INVITATION_ID',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, account: string, opts: { role: (typeof ROLES)[number] }) => {
        const client = await ctx.client();
        const workspace = await ctx.workspace(client);
        const invitation = await client.workspaces.invite(workspace, {
          ...(account.includes('@') ? { email: account } : { account_id: account }),
          role: opts.role,
        });
        printRecord(ctx, invitation, [
          ['invitation', invitation.id],
          ['invited', invitation.account_id ?? invitation.email],
          ['role', invitation.role],
          ['workspace', workspace],
          ['expires', invitation.expires_at],
        ]);
        if (!ctx.json)
          ctx.note(`pending until it is accepted: agenthost invitations accept ${invitation.id}`);
      }),
    );

  pageOptions(
    workspaces
      .command('invitations')
      .description('List a workspace’s pending invitations, oldest first (owners)')
      .argument('[workspace]', 'a workspace id or slug (default: -w, the profile’s, else the personal one)')
      .addHelpText('after', '\nExample:\n  agenthost workspaces invitations acme-research --all'),
    'invitations',
  ).action(
    cli.action(async (ctx, ref: string | undefined, flags: PageFlags) => {
      const client = await ctx.client();
      const id = ref ? (await findWorkspace(client, ref)).id : await ctx.workspace(client);
      const { items, total } = await readPages(flags, async (page) => {
        const answer = await client.workspaces.invitations(id, page);
        return { items: answer.invitations, total: answer.total };
      });
      printList(ctx, { invitations: items, total }, items, invitationColumns, 'no pending invitations');
      noteMore(ctx, flags, items.length, total);
    }),
  );

  workspaces
    .command('revoke')
    .description('Withdraw a pending invitation of the workspace (owners)')
    .argument('<invitation>', 'the invitation’s id (agenthost workspaces invitations lists them)')
    .addHelpText(
      'after',
      '\nExample:\n  agenthost workspaces revoke 0b6c3f0e-5d2a-8c41-9e7f-2a4b6c8d0e1f -w acme-research',
    )
    .action(
      cli.action(async (ctx, invitation: string) => {
        const client = await ctx.client();
        const workspace = await ctx.workspace(client);
        await client.workspaces.revokeInvitation(workspace, invitation);
        if (ctx.json) ctx.out(JSON.stringify({ revoked: invitation, workspace_id: workspace }, null, 2));
        else ctx.note(`revoked invitation ${invitation} of workspace ${workspace}`);
      }),
    );

  workspaces
    .command('remove')
    .description('Remove a member from the workspace (owners); the last owner cannot be removed')
    .argument('<account>', 'the member’s account id (agenthost workspaces members lists them)')
    .addHelpText(
      'after',
      '\nExample:\n  agenthost workspaces remove 6f1d2c34-0c1e-4b7a-9f51-3a1e2b9c0d11 -w acme-research',
    )
    .action(
      cli.action(async (ctx, account: string) => {
        const client = await ctx.client();
        const workspace = await ctx.workspace(client);
        await client.workspaces.removeMember(workspace, account);
        if (ctx.json) ctx.out(JSON.stringify({ removed: account, workspace_id: workspace }, null, 2));
        else ctx.note(`removed ${account} from workspace ${workspace}`);
      }),
    );

  workspaces
    .command('leave')
    .description('Leave the workspace (any member); its last owner cannot leave')
    .addHelpText('after', '\nExample:\n  agenthost workspaces leave -w acme-research')
    .action(
      cli.action(async (ctx) => {
        const client = await ctx.client();
        const workspace = await ctx.workspace(client);
        const me = await ownAccount(client);
        if (!me)
          throw new CliError('this key reaches no personal workspace to tell its account', EXIT.notFound);
        await client.workspaces.removeMember(workspace, me.account_id);
        if (ctx.json) ctx.out(JSON.stringify({ left: workspace, account_id: me.account_id }, null, 2));
        else ctx.note(`left workspace ${workspace}`);
      }),
    );

  workspaces
    .command('use')
    .description('Make a workspace the current profile’s default (written to the config file)')
    .argument('<workspace>', 'a workspace id or slug you are a member of')
    .addHelpText(
      'after',
      [
        '',
        'Example:',
        '  agenthost workspaces use acme-research',
        '-w/--workspace and AGENTHOST_WORKSPACE still override it per command.',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, ref: string) => {
        const client = await ctx.client();
        const workspace = await findWorkspace(client, ref);
        const resolved = await ctx.resolve();
        // Read afresh: the context's copy may predate this command.
        const file = await readConfigFile(ctx.configPath);
        const profile = file.profiles[resolved.profileName] ?? { url: resolved.url };
        profile.workspace = workspace.id;
        file.profiles[resolved.profileName] = profile;
        await writeConfigFile(ctx.configPath, file);
        printRecord(
          ctx,
          {
            profile: resolved.profileName,
            workspace_id: workspace.id,
            name: workspace.name,
            config: ctx.configPath,
          },
          [
            ['profile', resolved.profileName],
            ['workspace', workspace.id],
            ['name', workspace.name],
            ['config', ctx.configPath],
          ],
        );
        const envWorkspace = ctx.io.env[CLIENT_ENV.workspace];
        if (envWorkspace && envWorkspace !== workspace.id)
          ctx.note(`warning: ${CLIENT_ENV.workspace}=${envWorkspace} still overrides it in this shell`);
      }),
    );
}
