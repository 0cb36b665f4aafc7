/**
 * The agenthost CLI's command tree (commander): global options, every command group, and how a
 * command's failure becomes one line and an exit code (cli-errors.ts). bin/agenthost.ts runs it
 * on the process; tests run it as that subprocess.
 */
import { inspect } from 'node:util';
import { Command, CommanderError, Option } from 'commander';
import { redact } from '../shared/logger.ts';
import { CliContext, type CliIo, type GlobalOptions } from './cli-context.ts';
import { describeError, EXIT, USAGE_CODE, withoutTypedValues } from './cli-errors.ts';
import type { Action, CliRuntime } from './cli-runtime.ts';
import { CLONE_COMMANDS, type PackedClone, runInClone } from './clone-commands.ts';
import { commandPath } from './command-path.ts';
import { registerCommands } from './commands/index.ts';
import { signInHint } from './owner-key-hint.ts';
import { escapeControls, escapeControlsKeepingLayout } from './terminal-text.ts';

export interface ProgramOptions {
  /** A fixed help width, for the generated reference (docs/cli.md). */
  helpWidth?: number;
  /**
   * The installed CLI's clone and the arguments it was given: the commands that run the platform
   * run there (clone-commands.ts). Unset when the CLI runs from the clone itself.
   */
  inClone?: PackedClone & { argv: string[] };
}

export function buildProgram(
  io: CliIo,
  version: string,
  options: ProgramOptions = {},
): { program: Command; exitCode: () => number } {
  let exitCode: number = EXIT.ok;
  const program = new Command('agenthost')
    .description('Run, publish, call and operate agents on an agenthost platform')
    .version(version, '-V, --version', 'print the CLI version')
    .addOption(new Option('--profile <name>', 'the config profile to use (agenthost login --profile)'))
    .addOption(new Option('--url <url>', 'the platform URL (overrides AGENTHOST_URL and the profile)'))
    .addOption(new Option('--api-key <key>', 'the API key (overrides AGENTHOST_API_KEY and the profile)'))
    .addOption(
      new Option(
        '-w, --workspace <id>',
        'the workspace to act in (default: the profile’s, else the personal one)',
      ),
    )
    .option('--json', 'print one JSON document (for scripts)')
    .option('--debug', 'print stack traces of failures')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: true })
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // A usage mistake is one line like every other failure, with where to look.
      outputError: (s, write) =>
        write(
          `agenthost: ${USAGE_CODE}: ${escapeControls(
            withoutTypedValues(s)
              .replace(/^error: /, '')
              .trim(),
          )} (fix: see agenthost --help, or the command's --help)\n`,
        ),
      // A fixed width for the generated reference (docs/cli.md); the terminal's otherwise.
      ...(options.helpWidth ? { getOutHelpWidth: () => options.helpWidth as number } : {}),
    })
    .exitOverride();

  const runtime: CliRuntime = {
    io,
    action:
      <A extends unknown[]>(fn: Action<A>) =>
      async (...args: unknown[]) => {
        // commander passes the positional arguments, the command's options, then the command.
        const command = args.at(-1) as Command;
        const ctx = new CliContext(io, command.optsWithGlobals<GlobalOptions>());
        const inClone =
          options.inClone && CLONE_COMMANDS.includes(commandPath(command)) ? options.inClone : undefined;
        try {
          const code = inClone
            ? await runInClone(inClone, inClone.argv, io, commandPath(command))
            : await fn(ctx, ...(args.slice(0, -1) as A));
          if (typeof code === 'number') exitCode = code;
        } catch (err) {
          const url = await ctx
            .resolve()
            .then((r) => r.url)
            .catch(() => undefined);
          const { line, exitCode: code } = describeError(err, { url, signInHint: signInHint(io.env, url) });
          // Key-shaped strings never reach the terminal (a key pasted where a value was expected).
          io.stderr.write(`agenthost: ${redact(line)}\n`);
          // The whole error with --debug: its stack and its causes (fetch's socket error, say).
          if (ctx.options.debug)
            io.stderr.write(`${escapeControlsKeepingLayout(redact(inspect(err, { depth: 4 })))}\n`);
          exitCode = code;
        }
      },
  };
  registerCommands(program, runtime);
  return { program, exitCode: () => exitCode };
}

/**
 * Parses `argv` (the user's arguments) and runs the command; resolves to the exit code. `packed`:
 * the installed CLI's clone (its package.json's `agenthost`), where the commands that run the
 * platform run.
 */
export async function runCli(
  argv: string[],
  io: CliIo,
  version: string,
  packed?: PackedClone,
): Promise<number> {
  const { program, exitCode } = buildProgram(io, version, packed ? { inClone: { ...packed, argv } } : {});
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end here with code 0; a usage error was already printed.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    throw err;
  }
  return exitCode();
}
