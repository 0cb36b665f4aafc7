/**
 * `agenthost services …`: always-on services (docs/services.md). deploy waits until the app runs
 * and prints its URL; restart and update wait the same way; logs reads the app's output with the
 * agent logs' reader (log-follow.ts). A service is named by its id or its name in the workspace.
 */
import { type Command, Option } from 'commander';
import type { CliContext, Client } from '../cli-context.ts';
import { CliError, EXIT } from '../cli-errors.ts';
import { printJson, printList, printRecord } from '../cli-output.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { collectKeyValue, collectList } from '../key-value-option.ts';
import { type LogFlags, showLogs } from '../log-follow.ts';
import { intArg } from '../option-parsers.ts';
import { noteMore, type PageFlags, pageOptions, readPages } from '../paging.ts';
import { patchOf, type ServicePatchFlags } from '../service-patch.ts';
import { asService, findService, type ServiceRecord } from '../service-record.ts';
import { DEFAULT_WAIT_SECONDS, waitUntilRunning } from '../service-wait.ts';
import { escapeControls } from '../terminal-text.ts';
import { logOptions } from './agents.ts';

interface WaitFlags {
  /** false with --no-wait. */
  wait: boolean;
  waitTimeout: number;
}

interface DeployFlags extends WaitFlags {
  name?: string;
  command?: string;
  env?: Record<string, string>;
  secret?: string[];
  minInstances?: number;
  maxInstances?: number;
  autoUpdate?: boolean;
  /** false with --no-http. */
  http: boolean;
  alertUrl?: string;
  maxRestartFailures?: number;
}

interface UpdateFlags extends WaitFlags, ServicePatchFlags {
  latest?: boolean;
  pin?: string;
}

const serviceColumns = [
  { header: 'NAME', value: (s: ServiceRecord) => s.name },
  { header: 'AGENT', value: (s: ServiceRecord) => `${s.agent}@${s.agent_version}` },
  { header: 'STATE', value: (s: ServiceRecord) => s.state },
  { header: 'HEALTH', value: (s: ServiceRecord) => s.health_status },
  { header: 'URL', value: (s: ServiceRecord) => s.url },
  { header: 'ID', value: (s: ServiceRecord) => s.id },
];

function showService(ctx: CliContext, s: ServiceRecord): void {
  const { events, ...record } = s;
  printRecord(ctx, s, [
    ['name', record.name],
    ['id', record.id],
    ['agent', `${record.agent}@${record.agent_version}`],
    ['auto update', record.auto_update],
    ['state', `${record.state}${record.paused_reason ? ` (${record.paused_reason})` : ''}`],
    ['health', record.health_status],
    ['url', record.url],
    ['command', record.command],
    ['http', record.http],
    ['env', Object.keys(record.env ?? {}).length ? record.env : null],
    ['secrets', record.secrets?.join(', ') || null],
    ['instances', `${record.min_instances}-${record.max_instances}`],
    ['restarts', record.restart_count],
    ['failed starts', `${record.consecutive_restart_failures} of ${record.max_restart_failures}`],
    ['alert url', record.alert_webhook_url],
    ['last error', record.last_error],
    ['deployed', record.deployed_at],
    ['last restart', record.last_restart_at],
  ]);
  if (!ctx.json && events?.length) {
    ctx.out('\nrecent events (newest first):');
    for (const e of events.slice(0, 10))
      ctx.out(`  ${e.at}  ${e.type.padEnd(17)} ${escapeControls(e.message)}`);
  }
}

/** --wait-timeout and --no-wait, for the commands that (re)start the app. */
function waitOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--wait-timeout <seconds>', 'how long to wait for the app to run, 1-3600')
        .argParser(intArg(1, 3600))
        .default(DEFAULT_WAIT_SECONDS),
    )
    .option('--no-wait', 'return at once, without waiting for the app to run');
}

/**
 * After a deploy, restart or change: waits for the app (unless --no-wait) while it starts. A change
 * to a paused service is stored for its next restart (`wasPaused`); any other pause is a failure.
 */
async function settle(
  ctx: CliContext,
  client: Client,
  ws: string,
  s: ServiceRecord,
  flags: WaitFlags,
  wasPaused = false,
): Promise<ServiceRecord> {
  if (wasPaused && s.state === 'paused') {
    ctx.note(
      `${s.name} is paused: the change applies when it restarts (agenthost services restart ${s.name})`,
    );
    return s;
  }
  if (!flags.wait || s.state === 'running') return s;
  return waitUntilRunning(ctx, client, ws, s, flags.waitTimeout);
}

export function registerServices(program: Command, cli: CliRuntime): void {
  const services = program
    .command('services')
    .description(
      'Always-on services: deploy an agent’s app with a URL, read its logs, restart and update it',
    );

  waitOptions(
    services
      .command('deploy')
      .description('Deploy an agent as an always-on service, wait until it runs, and print its URL')
      .argument('<agent>', 'org/name (follows new versions) or org/name@v2 (pinned)')
      .option('--name <name>', 'the service’s name, unique in the workspace (default: the agent’s name)')
      .option('--command <command>', 'the entrypoint, instead of the agent’s run command')
      .option('-e, --env <KEY=VALUE>', 'a plain environment variable; repeat for several', collectKeyValue)
      .option(
        '--secret <NAME>',
        'a vault secret to inject beyond the agent’s own; repeat for several',
        collectList,
      )
      .addOption(new Option('--min-instances <n>', 'instances to run (default 1)').argParser(intArg(1, 100)))
      .addOption(
        new Option('--max-instances <n>', 'the most instances to scale to (default: min)').argParser(
          intArg(1, 100),
        ),
      )
      .option('--auto-update', 'follow newly published versions (the default unless pinned)')
      .option('--no-auto-update', 'stay on the deployed version')
      .option('--no-http', 'the app serves no HTTP (it only makes outbound connections)')
      .option('--alert-url <url>', 'where to POST crash-loop alerts')
      .addOption(
        new Option(
          '--max-restart-failures <n>',
          'failed starts in a row before it pauses, 2-100 (default 6)',
        ).argParser(intArg(2, 100)),
      ),
  )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  agenthost services deploy acme/web --env GREETING=hello --secret STRIPE_KEY',
        '  agenthost services deploy acme/web@v3 --name web-v3 --no-wait --json',
        'Progress goes to stderr; stdout is the URL (the service record with --json). Exits 1 if the',
        'service pauses (a crash loop) or is not running after --wait-timeout.',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, agent: string, flags: DeployFlags) => {
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        const deployed = asService(
          await client.services.deploy(ws, {
            agent,
            ...(flags.name !== undefined ? { name: flags.name } : {}),
            ...(flags.command !== undefined ? { command: flags.command } : {}),
            ...(flags.env ? { env: flags.env } : {}),
            ...(flags.secret ? { secrets: flags.secret } : {}),
            ...(flags.minInstances !== undefined ? { min_instances: flags.minInstances } : {}),
            ...(flags.maxInstances !== undefined ? { max_instances: flags.maxInstances } : {}),
            ...(flags.autoUpdate !== undefined ? { auto_update: flags.autoUpdate } : {}),
            ...(flags.http === false ? { http: false } : {}),
            ...(flags.alertUrl !== undefined ? { alert_webhook_url: flags.alertUrl } : {}),
            ...(flags.maxRestartFailures !== undefined
              ? { max_restart_failures: flags.maxRestartFailures }
              : {}),
          }),
        );
        ctx.note(`deployed ${deployed.agent}@${deployed.agent_version} as ${deployed.name} (${deployed.id})`);
        const s = await settle(ctx, client, ws, deployed, flags);
        if (ctx.json) printJson(ctx, s);
        else if (s.url) ctx.out(s.url);
        else ctx.note(`${s.name} serves no HTTP, so it has no URL`);
      }),
    );

  pageOptions(
    services
      .command('list')
      .description('List the workspace’s services')
      .addHelpText('after', ['', 'Example:', '  agenthost services list --all --json'].join('\n')),
    'services',
  ).action(
    cli.action(async (ctx, flags: PageFlags) => {
      const client = await ctx.client();
      const ws = await ctx.workspace(client);
      const { items, total } = await readPages(flags, async (page) => {
        const { services: found, total: all } = await client.services.list(ws, page);
        return { items: found.map(asService), total: all };
      });
      printList(ctx, { services: items, total }, items, serviceColumns, 'no services');
      noteMore(ctx, flags, items.length, total);
    }),
  );

  services
    .command('get')
    .description('Show a service and its recent events')
    .argument('<service>', 'the service’s name or id')
    .addHelpText('after', ['', 'Example:', '  agenthost services get web'].join('\n'))
    .action(
      cli.action(async (ctx, ref: string) => {
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        const { id } = await findService(client, ws, ref);
        showService(ctx, asService(await client.services.get(ws, id)));
      }),
    );

  logOptions(
    services
      .command('logs')
      .description('Show a service’s output (stdout info, stderr error, [platform] notes), oldest first')
      .argument('<service>', 'the service’s name or id'),
  )
    .addHelpText('after', ['', 'Example:', '  agenthost services logs web --level error --follow'].join('\n'))
    .action(
      cli.action(async (ctx, ref: string, flags: LogFlags) => {
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        const { id } = await findService(client, ws, ref);
        await showLogs(ctx, (query) => client.services.logs(ws, id, query), flags);
      }),
    );

  waitOptions(
    services
      .command('restart')
      .description('Restart a service on the same version (resumes a paused one) and wait until it runs')
      .argument('<service>', 'the service’s name or id')
      .addHelpText(
        'after',
        [
          '',
          'Examples:',
          '  agenthost services restart web',
          '  agenthost services restart web --no-wait',
        ].join('\n'),
      ),
  ).action(
    cli.action(async (ctx, ref: string, flags: WaitFlags) => {
      const client = await ctx.client();
      const ws = await ctx.workspace(client);
      const { id } = await findService(client, ws, ref);
      const s = await settle(ctx, client, ws, asService(await client.services.restart(ws, id)), flags);
      showService(ctx, s);
    }),
  );

  waitOptions(
    services
      .command('update')
      .description(
        'Change a service’s settings, or move it to another version (a running app restarts; the CLI waits)',
      )
      .argument('<service>', 'the service’s name or id')
      .option('--command <command>', 'a new entrypoint')
      .option('--clear-command', 'go back to the agent’s own run command')
      .option(
        '-e, --env <KEY=VALUE>',
        'set a variable, keeping the others; repeat for several',
        collectKeyValue,
      )
      .option('--unset-env <KEY>', 'remove a variable; repeat for several', collectList)
      .option('--secret <NAME>', 'inject another vault secret; repeat for several', collectList)
      .option('--remove-secret <NAME>', 'stop injecting an extra secret; repeat for several', collectList)
      .addOption(new Option('--min-instances <n>', 'instances to run').argParser(intArg(1, 100)))
      .addOption(
        new Option('--max-instances <n>', 'the most instances to scale to').argParser(intArg(1, 100)),
      )
      .option('--auto-update', 'follow newly published versions')
      .option('--no-auto-update', 'stay on the current version')
      .option('--alert-url <url>', 'where to POST crash-loop alerts')
      .option('--no-alert-url', 'send no crash-loop alerts')
      .addOption(
        new Option('--max-restart-failures <n>', 'failed starts in a row before it pauses, 2-100').argParser(
          intArg(2, 100),
        ),
      )
      .addOption(new Option('--latest', 'move to the newest published version').conflicts('pin'))
      .option('--pin <version>', 'move to this version (v3) and stay on it (auto update off)'),
  )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  agenthost services update web --env GREETING=hi --unset-env DEBUG',
        '  agenthost services update web --latest',
        '--env and --secret add to what the service has (the CLI sends the whole set the API expects).',
        'Settings are changed first, then the version; a paused service keeps them for its next restart.',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, ref: string, flags: UpdateFlags) => {
        if (flags.command !== undefined && flags.clearCommand)
          throw new CliError('give --command or --clear-command, not both', EXIT.usage);
        if (flags.pin !== undefined && !/^v[1-9][0-9]*$/.test(flags.pin))
          throw new CliError(`--pin ${flags.pin} is not a version`, EXIT.usage, 'write it as v3');
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        const current = await findService(client, ws, ref);
        const patch = patchOf(current, flags);
        const moving = flags.latest || flags.pin !== undefined;
        if (Object.keys(patch).length === 0 && !moving)
          throw new CliError(
            'nothing to change',
            EXIT.usage,
            'give a setting (--env, --command, --min-instances …), --latest or --pin vN',
          );
        let s = current;
        if (Object.keys(patch).length > 0) s = asService(await client.services.patch(ws, current.id, patch));
        if (moving)
          s = asService(
            await client.services.update(
              ws,
              current.id,
              flags.pin !== undefined ? { version: flags.pin } : {},
            ),
          );
        showService(ctx, await settle(ctx, client, ws, s, flags, current.state === 'paused'));
      }),
    );

  services
    .command('delete')
    .description('Stop a service and delete it (its name and its slot in your plan are freed)')
    .argument('<service>', 'the service’s name or id')
    .addHelpText('after', ['', 'Example:', '  agenthost services delete web'].join('\n'))
    .action(
      cli.action(async (ctx, ref: string) => {
        const client = await ctx.client();
        const ws = await ctx.workspace(client);
        const s = await findService(client, ws, ref);
        await client.services.delete(ws, s.id);
        if (ctx.json) printJson(ctx, { deleted: s.id, name: s.name });
        else ctx.note(`deleted service ${s.name} (${s.id})`);
      }),
    );
}
