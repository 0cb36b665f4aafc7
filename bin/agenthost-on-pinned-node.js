#!/usr/bin/env node
/**
 * The clone's own `agenthost` bin (package.json "bin"): what `npx agenthost` in the clone,
 * `npx --prefix <clone> agenthost`, `npm link` and `npm install -g <clone>` run. Whatever Node
 * runs this file (npm's own, 20 on many machines, which runs no TypeScript), it runs the CLI,
 * bin/agenthost.ts, on the clone's pinned Node (the `node` devDependency, as `npm start` does),
 * with the same arguments, directory, environment and terminal, and exits with its code. Plain
 * JavaScript for that reason. The packed CLI (`npm run cli:install`, docs/cli.md "Install") starts
 * faster: one process, compiled, not two.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

const clone = fileURLToPath(new URL('..', import.meta.url));
const node = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
const cli = fileURLToPath(new URL('./agenthost.ts', import.meta.url));

const child = spawn(node, ['--max-semi-space-size=16', cli, ...process.argv.slice(2)], { stdio: 'inherit' });
// As functions/cli/clone-commands.ts does: the terminal's Ctrl-C reaches the CLI too, which stops
// cleanly on the first; a SIGTERM or SIGHUP sent to this process alone is passed on.
process.on('SIGINT', () => {});
for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('error', (err) => {
  process.stderr.write(
    `agenthost: INTERNAL_ERROR: cannot run the clone's pinned Node, ${node}: ${err.message} (fix: cd '${clone.replaceAll("'", "'\\''")}' && npm install)\n`,
  );
  process.exitCode = 1;
});
child.on('exit', (code, signal) => {
  process.exitCode = code ?? 128 + (signal ? constants.signals[signal] : 0);
});
