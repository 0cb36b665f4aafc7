import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { runCli as runCommandTree } from '../../functions/cli/program.ts';
import { ENV } from '../../functions/shared/env-names.ts';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/**
 * Runs a CLI command in this process: the command tree bin/agenthost.ts runs (functions/cli/
 * program.ts), with the same arguments, environment (this process's, then `env`), stdin (`input`,
 * else empty and closed) and exit code, its stdout and stderr collected. What bin/agenthost.ts adds
 * is kept too: an error that escapes the tree is printed with its stack and exits 1, so a test's
 * "no stack trace" still sees it.
 *
 * Why not a subprocess (test/helpers/process.ts runCli): a CLI process costs about 0.35 s of CPU
 * (Node's start and the command tree's modules; a `run` more, the whole platform's), and the files
 * that check every command's output ran hundreds of them: cli-admin's 141 cost 130 s of CPU, and
 * with cli.test.ts, cli-init-run and cli-schedules, about 300 s, the most of npm test's two cores for
 * its first minutes. The process itself (its start, exit code, signals, what it loads) is checked
 * in cli.test.ts, cli-calls.test.ts (a terminal), cli-agents.test.ts (logs --follow),
 * cli-start-modules.test.ts and cli-installed.test.ts, which keep subprocesses.
 * Not for what needs a process of its own: another working directory, a signal (a service's run,
 * logs --follow stopped), a terminal, or `start`.
 */
export async function runCliInProcess(
  args: string[],
  env: Record<string, string>,
  options: { input?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io = {
    env: { ...process.env, [ENV.logLevel]: 'warn', ...env },
    stdout: {
      write(text: string) {
        stdout += text;
        return true;
      },
    },
    stderr: {
      write(text: string) {
        stderr += text;
        return true;
      },
    },
    stdin: Readable.from(options.input ? [Buffer.from(options.input)] : []),
  };
  let code: number;
  try {
    code = await runCommandTree(args, io, version);
  } catch (err) {
    stderr += `agenthost: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`;
    code = 1;
  }
  return { code, stdout, stderr };
}
