#!/usr/bin/env node
/**
 * The agenthost CLI: the command tree is functions/cli/program.ts; docs/cli.md lists every command.
 * Run from the clone (`npm run agenthost --`, `npm start`), it runs every command in this process.
 * It is also the entry of the installed CLI (scripts/cli-pack.ts compiles it into the package's
 * bin/agenthost.js), whose package.json names the clone the commands that run the platform run in
 * (functions/cli/clone-commands.ts); that one runs on Node 20 too, so nothing here may need more.
 */
import { readFileSync } from 'node:fs';
import module from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';

// Node compiles the CLI's two hundred modules on every start: 0.8 s of a `--help`, most of a
// short command. V8's code cache on disk makes a second start 0.3 s (docs/cli.md "Start-up").
// Enabled before the command tree is imported, so it covers all of it. Kept per user, not in the
// shared temporary directory: a cache another user could write would be code we run.
// NODE_COMPILE_CACHE=<dir> moves it; NODE_DISABLE_COMPILE_CACHE=1 turns it off. Node 20 has none.
module.enableCompileCache?.(
  process.env.NODE_COMPILE_CACHE
    ? undefined
    : join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'agenthost', 'node-compile-cache'),
);
const { runCli } = await import('../functions/cli/program.ts');

const { version, agenthost } = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
) as {
  version: string;
  /** Written by scripts/cli-pack.ts into the installed CLI's package.json. */
  agenthost?: { clone?: string; owner?: number };
};

runCli(
  process.argv.slice(2),
  { env: process.env, stdout: process.stdout, stderr: process.stderr, stdin: process.stdin },
  version,
  agenthost?.clone ? { clone: agenthost.clone, owner: agenthost.owner } : undefined,
).then(
  (code) => {
    // A command that keeps running (start, logs --follow) leaves the code unset until it ends.
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`agenthost: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
