import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * An emulator's state as one JSON file (mode 0600: it may hold secret values), replaced
 * atomically (write a temporary file, then rename) so a crash mid-write leaves the previous state.
 * Synchronous on purpose: every change is on disk before the request that made it is answered,
 * in the order the changes were made.
 */
export class JsonStateFile<T> {
  private readonly path: string;

  constructor(path: string) {
    this.path = path;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  }

  /** The saved state, or `fallback` when there is none yet. */
  load(fallback: T): T {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return fallback;
      throw err;
    }
    return JSON.parse(text) as T;
  }

  save(state: T): void {
    const temp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(state), { mode: 0o600 });
    renameSync(temp, this.path);
  }
}
