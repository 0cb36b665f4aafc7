/**
 * What every sandbox agrees on, whichever adapter runs it (bubblewrap locally, ECS in AWS) and
 * the runner inside an ECS task: where the working directory appears, how much stderr is kept,
 * and the error a refused file path raises. The Sandbox port (functions/ports/sandbox.ts)
 * re-exports them; they live here because the task's runner (functions/containers/) may import
 * shared helpers only.
 */

/** Where the working directory appears inside the sandbox (the command's cwd and HOME). */
export const SANDBOX_WORK_DIR = '/work';

/** Bytes of stderr kept for ExecResult.stderrTail: the last 8 KB. */
export const STDERR_TAIL_BYTES = 8 * 1024;

/**
 * A path given to a session's readFile/writeFile/listFiles that is not a plain relative path
 * inside the working directory (or names a link, a directory where a file is meant, ...). Its
 * message names only the path as given, never a host path, so the managed loop shows it to the
 * model as it is.
 */
export class SandboxPathError extends Error {
  override name = 'SandboxPathError';
}
