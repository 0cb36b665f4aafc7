/** `agenthost start`: serve the platform on this machine (local mode, or the emulated AWS deployment). */
import type { Command } from 'commander';
import { ENV } from '../../shared/env-names.ts';
import { shellQuote } from '../../shared/shell-quote.ts';
import { CliError, EXIT } from '../cli-errors.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { CLI_COMMAND } from '../copyable-command.ts';

export function registerStart(program: Command, cli: CliRuntime): void {
  program
    .command('start')
    .description(
      'Serve the API on HOST:PORT (default 127.0.0.1:8787) with data in PLATFORM_DATA_DIR; runs until stopped',
    )
    .option(
      '--emulated',
      'run the AWS deployment as `cdk synth` builds it, on this machine (needs Java 17+; docs/deploy.md)',
    )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  PORT=8788 PLATFORM_DATA_DIR=./.data agenthost start',
        '  agenthost start --emulated',
        'Configuration comes from the environment (PORT, HOST, PLATFORM_*): see README.md.',
      ].join('\n'),
    )
    .action(
      cli.action(async (ctx, opts: { emulated?: boolean }) => {
        // Imported when run: the settings' schema (zod) is not loaded by every other command.
        const { processConfig } = await import('../../platform/config.ts');
        const config = processConfig();
        try {
          if (opts.emulated) {
            const { startEmulatedPlatform } = await import('../../emulator/start-emulated.ts');
            await startEmulatedPlatform(config);
          } else {
            const { startLocalPlatform } = await import('../../local-platform/start.ts');
            await startLocalPlatform(config);
          }
        } catch (err) {
          // Loaded here, not with every command: the lock's module brings node:sqlite.
          const { DataDirInUseError, LockPathError } = await import('../../platform/data-dir-lock.ts');
          if (err instanceof DataDirInUseError)
            throw new CliError(
              err.message,
              EXIT.conflict,
              err.holder
                ? `stop it first (kill ${err.holder.pid}), or give this platform a data dir of its own: PLATFORM_DATA_DIR=./other-data PORT=8788 agenthost start`
                : 'stop the platform running on it, or give this one a data dir of its own: PLATFORM_DATA_DIR=./other-data PORT=8788 agenthost start',
            );
          if (err instanceof LockPathError)
            throw new CliError(
              err.message,
              EXIT.conflict,
              `move it out of the way (mv ${shellQuote(err.path)} ${shellQuote(`${err.path}.moved`)}) and start again; the platform makes its own`,
            );
          if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
            const { freePortAfter } = await import('../../local-platform/port-reservation.ts');
            const free = await freePortAfter(config.port, config.host);
            throw new CliError(
              `port ${config.port} on ${config.host} is already in use`,
              EXIT.conflict,
              `stop what listens there, or start on a free port: ${startCommand(ctx.io.env, free, opts.emulated === true)}`,
            );
          }
          throw err;
        }
      }),
    );
}

/**
 * The command that starts this platform again on `port`, as it was started: the npm script it ran
 * from (`npm start`, `npm run start:emulated`), else the CLI; with the data dir and host it was
 * given, so that it runs as printed whether they were exported or set on the command line.
 */
function startCommand(env: NodeJS.ProcessEnv, port: number, emulated: boolean): string {
  const settings = [ENV.dataDir, ENV.host]
    .filter((name) => env[name])
    .map((name) => `${name}=${shellQuote(env[name] as string)}`);
  const script = env.npm_lifecycle_event;
  const command =
    script === 'start' && !emulated
      ? 'npm start'
      : script === 'start:emulated' && emulated
        ? 'npm run start:emulated'
        : `${CLI_COMMAND} start${emulated ? ' --emulated' : ''}`;
  return [...settings, `${ENV.port}=${port}`, command].join(' ');
}
