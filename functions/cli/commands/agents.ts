/** `agenthost agents …` and `agenthost logs AGENT`: the caller's agents and their execution logs. */
import { type Command, Option } from 'commander';
import { findOwnAgent, resolveAgentRef } from '../agent-ref.ts';
import type { CliContext } from '../cli-context.ts';
import { printList, printRecord } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { type LogFlags, showLogs } from '../log-follow.ts';
import { intArg, seconds } from '../option-parsers.ts';

type AgentRecord = Awaited<ReturnType<typeof findOwnAgent>>;

const agentColumns = [
  { header: 'AGENT', value: (a: AgentRecord) => `${a.org}/${a.name}@${a.version}` },
  { header: 'TYPE', value: (a: AgentRecord) => a.type },
  { header: 'STATUS', value: (a: AgentRecord) => a.status },
  { header: 'ID', value: (a: AgentRecord) => a.id },
];

function showAgent(ctx: CliContext, a: AgentRecord): void {
  printRecord(ctx, a, [
    ['agent', `${a.org}/${a.name}@${a.version}`],
    ['id', a.id],
    ['type', a.type],
    ['engine', a.execution_engine],
    ['status', a.status],
    ['description', a.description],
    ['workspace', a.workspace_id],
    ['bundle', a.bundle ? 'uploaded' : 'none'],
    ['created', a.created_at],
  ]);
}

/** `--since`, `--until`, `--level`, `--limit`, `--follow`: the filters of docs/logs.md. */
export function logOptions(command: Command): Command {
  return command
    .option('--since <time>', 'only lines at or after this ISO 8601 time')
    .option('--until <time>', 'only lines at or before this ISO 8601 time')
    .addOption(
      new Option('--level <level>', 'the lowest severity to show').choices(['info', 'warn', 'error']),
    )
    .option('--limit <n>', 'lines to show, 1-5000 (default 100)', intArg(1, 5000))
    .option('-F, --follow', 'keep printing new lines as they come (Ctrl-C to stop)')
    .option('--interval <seconds>', 'with --follow: how often to look for new lines', seconds(0.2, 3600), 2);
}

export function registerAgents(program: Command, cli: CliRuntime): void {
  const agents = program
    .command('agents')
    .description('Your agents: list, inspect, fork and delete versions');

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

  agents
    .command('get')
    .description('Show one agent version')
    .argument('<agent>', 'an id, org/name (the newest version) or org/name@v2')
    .addHelpText('after', ['', 'Example:', '  agenthost agents get acme/triage@v2'].join('\n'))
    .action(
      cli.action(async (ctx, ref: string) => showAgent(ctx, await findOwnAgent(await ctx.client(), ref))),
    );

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
