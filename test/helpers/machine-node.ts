import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * The machine's own node: the first on PATH outside any node_modules (npm puts the pinned one
 * first). The installed CLI runs on it, whatever Node the project pins (test/cli/cli-installed.test.ts,
 * bench/cli-start.ts).
 */
export function machineNode(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir || dir.includes('node_modules')) continue;
    try {
      accessSync(join(dir, 'node'), constants.X_OK);
      return join(dir, 'node');
    } catch {}
  }
  return undefined;
}
