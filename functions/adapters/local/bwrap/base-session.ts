/**
 * What the bubblewrap and unisolated sessions share: the file API over the working directory, the
 * execs still running, the disk limit's figures and close(). Each subclass adds its own exec.
 */
import type { SessionSpec } from '../../../ports/sandbox.ts';
import type { HostWorkDir } from './host-work-dir.ts';
import { type PreparedRun, removeTree } from './run-dir.ts';
import { MAX_NEW_ENTRIES, type Running } from './supervise-child.ts';

/** Bookkeeping shared by both session kinds: the file API, running execs, close(). */
export class BaseSession {
  readonly spec: SessionSpec;
  protected readonly run: PreparedRun;
  protected readonly running = new Set<Running>();
  protected closed = false;
  /** Set once a command marked `last` was given (ExecOptions.last): nothing but close may follow. */
  private ended = false;
  private closing: Promise<void> | undefined;

  constructor(spec: SessionSpec, run: PreparedRun) {
    this.spec = spec;
    this.run = run;
  }

  // async: a closed session's refusal is a rejected promise, as the port's callers expect.
  async readFile(path: string): Promise<Buffer> {
    this.assertOpen();
    return this.run.work.readFile(path);
  }

  async writeFile(path: string, data: Buffer | string): Promise<void> {
    this.assertOpen();
    return this.run.work.writeFile(path, data);
  }

  async listFiles(path?: string): Promise<string[]> {
    this.assertOpen();
    return this.run.work.listFiles(path);
  }

  /** Ends the session once; every call, the second included, resolves when the clean-up is done. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      for (const r of this.running) r.kill();
      await Promise.allSettled([...this.running].map((r) => r.done));
      await removeTree(this.run.runDir);
    })();
    return this.closing;
  }

  /** For superviseChild: registers a running exec until it settles. */
  track(r: Running): () => void {
    this.running.add(r);
    return () => this.running.delete(r);
  }

  diskCheck(): { work: HostWorkDir; maxBytes: number; maxEntries: number } {
    return {
      work: this.run.work,
      maxBytes: this.run.baseline.bytes + this.spec.limits.diskBytes,
      maxEntries: this.run.baseline.entries + MAX_NEW_ENTRIES,
    };
  }

  protected assertOpen(): void {
    if (this.closed) throw new Error(`Sandbox session ${this.spec.runId} is closed`);
    if (this.ended) throw new Error(`Sandbox session ${this.spec.runId} has run its last command`);
  }

  /**
   * `exec` of a subclass: refused after the last command; one marked last ends the commands from
   * the moment it is given (anything but close, even while it runs, is refused, as on ECS).
   */
  protected async execGuarded<T>(options: { last?: boolean }, exec: () => Promise<T>): Promise<T> {
    this.assertOpen();
    if (options.last) this.ended = true;
    return exec();
  }

  /** What an exec checks once it runs (execGuarded checked the rest): the session is not closed. */
  protected assertNotClosed(): void {
    if (this.closed) throw new Error(`Sandbox session ${this.spec.runId} is closed`);
  }

  /** When this exec must end: the session's deadline or the exec's own timeout, whichever is first. */
  protected deadlineOf(timeoutMs: number | undefined, now: number): number {
    return Math.min(
      this.spec.deadlineMs,
      timeoutMs === undefined ? Number.POSITIVE_INFINITY : now + timeoutMs,
    );
  }
}
