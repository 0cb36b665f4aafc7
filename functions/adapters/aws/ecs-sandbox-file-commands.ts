/**
 * The ECS sandbox's file operations (functions/adapters/aws/ecs-sandbox-session.ts) as the small
 * shell commands the session runs in the task, as uid 1000 like any exec: the task is reached only
 * through its command and result objects. Each refuses a symbolic link where a file or directory
 * is named, and says why on stderr (the session's SandboxPathError).
 */
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
