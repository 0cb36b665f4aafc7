/**
 * The ECS sandbox's file operations (functions/adapters/aws/ecs-sandbox-session.ts) as the small
 * shell commands the session runs in the task, as uid 1000 like any exec: the task is reached only
 * through its command and result objects. Each refuses a symbolic link where a file or directory
 * is named, and says why on stderr (the session's SandboxPathError).
 */
import { type ExecResult, SandboxUnavailableError } from '../../ports/sandbox.ts';
import { SandboxPathError } from '../../shared/sandbox-conventions.ts';
import { shellQuote } from '../../shared/shell-quote.ts';

/** listFiles returns at most this many paths (as the local adapter). */
const MAX_LISTED_FILES = 10_000;

/** Prints a regular file of the working directory (`rel`, already checked) as base64. */
export function readFileCommand(rel: string): string {
  return `f=${shellQuote(rel)}; if [ -L "$f" ] || [ ! -f "$f" ]; then echo "not a regular file" >&2; exit 2; fi; base64 -w 0 < "$f"`;
}

/** Writes stdin (base64) to `rel`, its directories created, an existing file replaced. */
export function writeFileCommand(rel: string): string {
  return `f=${shellQuote(rel)}; if [ -L "$f" ] || [ -d "$f" ]; then echo "not a regular file" >&2; exit 2; fi; mkdir -p -- "$(dirname -- "$f")" && base64 -d > "$f"`;
}

/** Lists the regular files under `dir` (links not followed), NUL-separated. */
export function listFilesCommand(dir: string): string {
  return `d=${shellQuote(dir)}; if [ -L "$d" ] || [ ! -d "$d" ]; then echo "not a directory" >&2; exit 2; fi; find "$d" -type f -print0`;
}

/** listFilesCommand's output as paths relative to the working directory, sorted, at most 10,000. */
export function listedFiles(stdout: string): string[] {
  const found = stdout
    .split('\0')
    .filter(Boolean)
    .map((p) => (p.startsWith('./') ? p.slice(2) : p))
    .sort();
  return found.slice(0, MAX_LISTED_FILES);
}

/**
 * A file operation's command, as its caller sees it: the run's deadline is the sandbox's failure;
 * any other failure is a SandboxPathError (the managed loop shows it to the model).
 */
export function fileOpOutcome(what: string, path: string, r: ExecResult): ExecResult {
  if (r.timedOut) {
    throw new SandboxUnavailableError(
      `ECS sandbox: ${what} ${JSON.stringify(path)} reached the run's deadline`,
    );
  }
  if (r.exitCode !== 0) {
    const why = r.stderrTail.trim().split('\n').at(-1) || `exit status ${r.exitCode ?? r.signal}`;
    throw new SandboxPathError(`${what} ${JSON.stringify(path)}: ${why}`);
  }
  return r;
}

/** The bytes readFileCommand printed as base64; an output cut at the limit is refused, not cut. */
export function readFileContent(path: string, r: ExecResult): Buffer {
  if (r.stdoutTruncated) {
    throw new SandboxPathError(
      `readFile ${JSON.stringify(path)}: the file is too large to read from the ECS sandbox`,
    );
  }
  return Buffer.from(r.stdout.trim(), 'base64');
}
