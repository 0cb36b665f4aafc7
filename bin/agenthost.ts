#!/usr/bin/env node
/** The agenthost CLI: the command tree is functions/cli/program.ts; docs/cli.md lists every command. */
import { readFileSync } from 'node:fs';
import { runCli } from '../functions/cli/program.ts';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

runCli(
  process.argv.slice(2),
  { env: process.env, stdout: process.stdout, stderr: process.stderr, stdin: process.stdin },
  version,
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
