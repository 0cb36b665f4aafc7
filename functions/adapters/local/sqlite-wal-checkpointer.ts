import type { DatabaseSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';

/**
 * The store's WAL checkpoints, run on a worker thread with a connection of its own instead of
 * inside the main thread's commits.
 *
 * Why: SQLite's automatic checkpoint runs inside the commit that takes the WAL past 1,000 pages,
 * on the thread that committed. With `synchronous = NORMAL` a commit does not sync, but a
 * checkpoint syncs the WAL (about 4 MB, some 13 ms on the bench machine's disk), copies its pages
 * into the database file and syncs that: under load the platform's one thread spent a tenth of its
 * wall time there, answering nothing (docs/performance.md, "What bounds it"). A PASSIVE checkpoint
 * on another connection copies the same frames without the write lock, so the main thread's
 * commits go on meanwhile; what is durable when is unchanged (a commit is in the WAL before its
 * caller hears of it; the checkpoint syncs as before).
 *
 * The worker starts once the store has made START_AFTER_COMMITS commits (a store written a few
 * times, as in most tests and CLI commands, keeps SQLite's own checkpoints and costs no thread),
 * and then waits for the next commit, waits DELAY_MS more so one checkpoint copies many commits'
 * pages, and checkpoints. Should it fail, the connection checkpoints inline again.
 */
export class SqliteWalCheckpointer {
  private readonly db: DatabaseSync;
  private readonly path: string;
  private readonly delayMs: number;
  private readonly startAfter: number;
  private commits = 0;
  /** commits[0] counts this connection's commits, for the worker to wait on. */
  private shared: Int32Array | undefined;
  private worker: Worker | undefined;

  constructor(
    db: DatabaseSync,
    path: string,
    options: { delayMs?: number; startAfterCommits?: number } = {},
  ) {
    this.db = db;
    this.path = path;
    this.delayMs = options.delayMs ?? DELAY_MS;
    this.startAfter = options.startAfterCommits ?? START_AFTER_COMMITS;
  }

  /** Called after each commit of the main connection. */
  committed(): void {
    if (this.shared !== undefined) {
      Atomics.add(this.shared, 0, 1);
      Atomics.notify(this.shared, 0);
    } else if (++this.commits === this.startAfter && this.path !== ':memory:') {
      // Called after a commit: a worker that cannot start (threads refused) must not fail the
      // writes that committed; the connection keeps checkpointing inline.
      try {
        this.start();
      } catch {
        this.inlineAgain();
      }
    }
  }

  /** Stops the worker and closes its connection (before the main connection closes). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.shared = undefined;
    if (worker === undefined) return;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.ref(); // a process whose last task is this close waits for it
    worker.postMessage('close');
    await exited;
  }

  private start(): void {
    const shared = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path: this.path, shared, delayMs: this.delayMs },
      // It allocates next to nothing: a small heap keeps its RSS small.
      resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
    });
    worker.unref();
    worker.on('error', () => this.inlineAgain());
    worker.on('exit', () => this.inlineAgain());
    this.db.exec('PRAGMA wal_autocheckpoint = 0');
    this.shared = shared;
    this.worker = worker;
  }

  /** The worker is gone (failed, or closing): the connection checkpoints inline, as SQLite does by default. */
  private inlineAgain(): void {
    this.shared = undefined;
    this.worker = undefined;
    if (this.db.isOpen) this.db.exec('PRAGMA wal_autocheckpoint = 1000');
  }
}

/** Commits before the worker starts. */
const START_AFTER_COMMITS = 200;
/** The wait after a commit before a checkpoint, so that one copies many commits' pages. */
const DELAY_MS = 50;

/** The worker, as CommonJS source: no module of the project to load. */
const WORKER_SOURCE = `
const { DatabaseSync } = require('node:sqlite');
const { parentPort, workerData } = require('node:worker_threads');
const { path, shared, delayMs } = workerData;
const db = new DatabaseSync(path, { timeout: 0 });
db.exec('PRAGMA synchronous = NORMAL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
let closing = false;
parentPort.on('message', () => {
  closing = true;
  db.close();
  process.exit(0); // ends this thread only, whatever it waits on
});
(async () => {
  let seen = 0;
  while (!closing) {
    const waited = Atomics.waitAsync(shared, 0, seen);
    if (waited.async) await waited.value;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (closing) break;
    seen = Atomics.load(shared, 0);
    checkpoint.get();
  }
})();
`;
