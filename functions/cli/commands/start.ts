/** `agenthost start`: serve the platform on this machine (local mode, or the emulated AWS deployment). */
import type { Command } from 'commander';
import { shellQuote } from '../../shared/shell-quote.ts';
import { CliError, EXIT } from '../cli-errors.ts';
import type { CliRuntime } from '../cli-runtime.ts';

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
      cli.action(async (_ctx, opts: { emulated?: boolean }) => {
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
                ? `stop it first (kill ${err.holder.pid}), or give this platform a data dir of its own: PLATFORM_DATA_DIR=./other-data PORT=8788 npm start`
                : 'stop the platform running on it, or give this one a data dir of its own: PLATFORM_DATA_DIR=./other-data PORT=8788 npm start',
            );
          if (err instanceof LockPathError)
            throw new CliError(
              err.message,
              EXIT.conflict,
              `move it out of the way (mv ${shellQuote(err.path)} ${shellQuote(`${err.path}.moved`)}) and start again; the platform makes its own`,
            );
          if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE')
            throw new CliError(
              `port ${config.port} on ${config.host} is already in use`,
              EXIT.usage,
              'stop what listens there, or start on another port: PORT=8788 agenthost start',
            );
          throw err;
        }
      }),
    );
}
