/** `agenthost services deploy`: an agent as an always-on service; waits until it runs, prints its URL. */
import { type Command, Option } from 'commander';
import { printJson } from '../../cli-output.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { collectKeyValue, collectList } from '../../key-value-option.ts';
import { intArg } from '../../option-parsers.ts';
import { asService } from '../../service-record.ts';
import { type DeployFlags, settle, waitOptions } from './service-view.ts';

/** Adds deploy to the `services` command. */
export function registerServiceDeploy(services: Command, cli: CliRuntime): void {
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
}
