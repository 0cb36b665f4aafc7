import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The node arguments that start a checkout's platform as `npm start` runs it: the node flags of
 * that checkout's package.json start script (the young generation's bound, docs/performance.md),
 * then its bin/agenthost.ts and `start`. A bench compares what ships, and an older checkout
 * compared side by side starts with its own flags.
 */
export function platformStartArgs(root: string): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
  };
  const start = pkg.scripts?.start ?? '';
  const m = /^node((?: --\S+)*) bin\/agenthost\.ts start$/.exec(start);
  if (!m)
    throw new Error(
      `${root}/package.json: the start script "${start}" is not "node [flags] bin/agenthost.ts start"`,
    );
  const flags = (m[1] ?? '').split(' ').filter(Boolean);
  return [...flags, join(root, 'bin', 'agenthost.ts'), 'start'];
}
