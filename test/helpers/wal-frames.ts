import { readFileSync } from 'node:fs';

/**
 * The frames of a SQLite WAL file, read from its bytes (a 32-byte header whose bytes 8 to 11 are
 * the page size, then frames of a 24-byte header and a page): each frame's page number, and
 * whether it ends a commit (a commit frame carries the database size after it; other frames 0).
 * Tests count what SQLite wrote, not what the store says it did.
 */
export function walFrames(path: string): { page: number; commit: boolean }[] {
  const wal = readFileSync(path);
  if (wal.length < 32) return [];
  const pageSize = wal.readUInt32BE(8);
  const frames: { page: number; commit: boolean }[] = [];
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize)
    frames.push({ page: wal.readUInt32BE(at), commit: wal.readUInt32BE(at + 4) !== 0 });
  return frames;
}
