/**
 * The commands that run the platform's own code in the CLI's process: `start` (the platform),
 * `run` (an in-process platform) and `accounts create` (the platform's store). They need the
 * clone: its node_modules, the sandbox's programs, the dashboard's build, the CDK app, and Node 24
 * (node:sqlite, TypeScript run as it is).
 *
 * The installed CLI (`npm run cli:pack`, docs/cli.md "Install") is every other command compiled
 * into one JavaScript file, which runs on any Node npm runs on (20 and up) from any directory. Its
 * package.json names the clone it was packed from, and it runs these commands there: the clone's
 * own CLI (bin/agenthost.ts) on the clone's pinned Node, with the same arguments, directory,
 * environment and terminal, its exit code the installed CLI's. Run from the clone itself, the
 * CLI runs them in its own process as before.
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { shellWord } from '../shared/shell-quote.ts';
import type { CliIo } from './cli-context.ts';
import { CliError, EXIT } from './cli-errors.ts';

/** Their paths under `agenthost`, as commander names them. */
export const CLONE_COMMANDS: readonly string[] = ['start', 'run', 'accounts create'];

/** The clone an installed CLI was packed from: its package.json's `agenthost` (scripts/cli-pack.ts). */
export interface PackedClone {
  /** Its absolute path. */
  clone: string;
  /** The id of the user who owned the clone's directory when the CLI was packed. */
  owner?: number;
}

const REPACK =
  'pack and install the CLI again from your clone: npm run cli:install there (docs/cli.md "Install")';

/**
 * Runs `agenthost <argv>` with the clone's CLI and its pinned Node (the `node` devDependency, the
 * one `npm start` runs), and answers its exit code.
 */
export async function runInClone(
  { clone, owner }: PackedClone,
  argv: string[],
  io: CliIo,
  command: string,
): Promise<number> {
  const cli = join(clone, 'bin', 'agenthost.ts');
  const node = join(clone, 'node_modules', 'node', 'bin', 'node');
  // The path was written down when the CLI was packed; whatever is there now is run as whoever runs
  // the CLI. A clone removed from a shared directory (/tmp) and made again by another user, or
  // handed over to one, would be their code run as you, root included: it runs only while the user
  // who owned it then owns it still (git refuses another user's repository the same way).
  const now = statSync(clone, { throwIfNoEntry: false });
  if (now && owner !== undefined && now.uid !== owner)
    throw new CliError(
      `agenthost ${command} runs the platform from the clone this CLI was packed from, ${clone}, which user ${owner} owned then and user ${now.uid} owns now: its code is not run`,
      EXIT.auth,
      REPACK,
      'FORBIDDEN',
    );
  if (!existsSync(cli))
    throw new CliError(
      `agenthost ${command} runs the platform from the clone this CLI was packed from, and ${clone} holds none`,
      EXIT.usage,
      REPACK,
    );
  if (!existsSync(node))
    throw new CliError(
      `agenthost ${command} runs the platform from its clone, ${clone}, which has no node_modules (its pinned Node)`,
      EXIT.usage,
      `cd ${shellWord(clone)} && npm install`,
    );
  // As the npm scripts start it (package.json "start"): a smaller young generation, less memory.
  const child = spawn(node, ['--max-semi-space-size=16', cli, ...argv], { stdio: 'inherit', env: io.env });
  // Ctrl-C reaches the whole foreground process group, the clone's CLI with it, which stops
  // cleanly on the first SIGINT (a second one would kill it): this process only waits. A SIGTERM
  // or SIGHUP sent to this process alone (a supervisor, a closed session) is passed on.
  const passOn = (signal: NodeJS.Signals) => child.kill(signal);
  const waitOn = () => {};
  process.on('SIGINT', waitOn);
  process.on('SIGTERM', passOn);
  process.on('SIGHUP', passOn);
  try {
    return await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) =>
        // A child ended by a signal exits as a shell reports it: 128 + the signal's number.
        resolve(code ?? 128 + (signal ? constants.signals[signal] : 0)),
      );
    });
  } finally {
    process.off('SIGINT', waitOn);
    process.off('SIGTERM', passOn);
    process.off('SIGHUP', passOn);
  }
}
