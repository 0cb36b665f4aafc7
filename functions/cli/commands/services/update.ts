/**
 * `agenthost services update`: a service's settings (env and secrets as changes to the whole set
 * the API replaces: service-patch.ts), then its version; the CLI waits while a running app restarts.
 */
import { type Command, Option } from 'commander';
import { CliError, EXIT } from '../../cli-errors.ts';
import type { CliRuntime } from '../../cli-runtime.ts';
import { collectKeyValue, collectList } from '../../key-value-option.ts';
import { intArg } from '../../option-parsers.ts';
import { patchOf } from '../../service-patch.ts';
import { asService, findService } from '../../service-record.ts';
import { settle, showService, type UpdateFlags, waitOptions } from './service-view.ts';

/** Adds update to the `services` command. */
export function registerServiceUpdate(services: Command, cli: CliRuntime): void {
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
}
