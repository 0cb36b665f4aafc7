import type { SandboxSession } from '../../ports/sandbox.ts';

/**
 * The sandbox time a call's run has used so far: every finished command's duration, and a command
 * still running counted up to now. A call that ends at its deadline answers 504 before its engine
 * has the killed command's duration, so its record takes the compute from here instead: a run that
 * timed out used its compute as much as one that finished.
 */
export class ComputeMeter {
  private finishedMs = 0;
  /** When each command still running started (process clock). */
  private readonly running = new Set<{ startedMs: number }>();

  /** Milliseconds of sandbox time so far. */
  get ms(): number {
    const now = Date.now();
    let ms = this.finishedMs;
    for (const command of this.running) ms += now - command.startedMs;
    return ms;
  }

  /** The session, its commands counted here as they run. */
  meter(session: SandboxSession): SandboxSession {
    return {
      get workDir() {
        return session.workDir;
      },
      exec: async (command, options) => {
        const entry = { startedMs: Date.now() };
        this.running.add(entry);
        try {
          const result = await session.exec(command, options);
          this.finishedMs += result.durationMs;
          return result;
        } catch (err) {
          this.finishedMs += Date.now() - entry.startedMs;
          throw err;
        } finally {
          this.running.delete(entry);
        }
      },
      readFile: (path) => session.readFile(path),
      writeFile: (path, data) => session.writeFile(path, data),
      listFiles: (path) => session.listFiles(path),
      close: () => session.close(),
    };
  }
}
