/**
 * docs/cli.md, generated from the CLI's own help (every command's `--help`, as a user sees it) and
 * its exit codes, so the reference cannot drift from the code: `npm run cli:docs` writes it and
 * test/cli/cli-reference.test.ts fails while the committed file differs.
 */
import type { Command } from 'commander';
import type { CliIo } from './cli-context.ts';
import { EXIT } from './cli-errors.ts';
import { commandPath } from './command-path.ts';
import { buildProgram } from './program.ts';

const EXIT_MEANINGS: Record<keyof typeof EXIT, string> = {
  ok: 'success',
  server: 'the platform failed (5xx, LLM_ERROR, TIMEOUT) or could not be reached',
  usage:
    'a mistake in the command line, the input or the configuration (unknown option, bad JSON, 400 INVALID_INPUT, 413, 415, 422)',
  conflict:
    '409 CONFLICT: it exists already, or changed meanwhile; `start`: another platform runs on the data dir',
  auth: 'no key, a wrong key (401), or a role that may not (403)',
  notFound: '404 NOT_FOUND',
  rateLimited: '429 RATE_LIMITED: a rate limit or a daily quota (the line says when to retry)',
  credits: '402 INSUFFICIENT_CREDITS: top up with `agenthost billing topup`',
};

const INTRO = `# The agenthost CLI

\`agenthost\` runs the platform (\`start\`, \`accounts create\`) and does everything an author or an
operator does against a running one, locally or on AWS: sign in, publish, call, read logs, and
manage schedules, services, secrets, keys, workspaces, tasks, usage and billing. It is built on
[commander](https://github.com/tj/commander.js) and the typed SDK (sdk/).

This file is generated from the CLI's own help by \`npm run cli:docs\`; do not edit it by hand.

## Install

The CLI is installed from your clone of agenthost, never from a registry: nobody publishes a
package for it, and \`npm install agenthost\` or \`npx agenthost\` outside the clone would fetch and
run whatever a stranger published under that name.

\`\`\`sh
npm run cli:install    # in the clone: packs the CLI and installs it with npm install -g
agenthost --help       # from any directory
\`\`\`

\`npm run cli:pack [-- DIR]\` only writes the package, \`agenthost-cli-<version>.tgz\`, into DIR
(the current directory by default), to install where you choose:
\`npm install -g ./agenthost-cli-0.1.0.tgz\`, or without root
\`npm install -g --prefix ~/.local ./agenthost-cli-0.1.0.tgz\` (\`~/.local/bin\` on \`PATH\`). Pack and install again after pulling: the package is the clone's code of that moment.
Inside the clone, \`npm run agenthost -- <command>\` runs the CLI from source without installing it.
The clone's own bin (package.json's \`bin\`, bin/agenthost-on-pinned-node.js) is plain JavaScript
that runs the CLI from source on the clone's pinned Node, so \`npm install -g <clone>\` (a link to
the clone), \`npm link\` and \`npx --prefix <clone> agenthost\` work on any Node too, at the cost of
starting two Node processes instead of one.

The package (scripts/cli-pack.ts) is the CLI compiled by esbuild into JavaScript for Node 20.17 and up,
with every dependency it loads and no \`dependencies\`: it installs offline and runs on whatever
Node \`npm\` runs on, from any directory. Three commands run the platform's own code, which needs
the clone (its dependencies, the sandbox's programs, the dashboard's build, the CDK app) and
Node 24: \`start\`, \`run\` and \`accounts create\`. The installed CLI runs them through the clone
it was packed from (its path is in the package's \`package.json\`), with the clone's pinned Node
(the \`node\` devDependency, as \`npm start\` runs), in your directory and environment, and exits
with their code; Ctrl-C and SIGTERM stop \`start\` as they stop \`npm start\`. A clone that moved
or lost its \`node_modules\` is named in the error, with the fix. The package also holds who owned
the clone when it was packed, and the CLI runs the clone's code only while that user owns it still:
a clone removed from a shared directory and made again there by another user, or handed over to
one, is refused (\`FORBIDDEN\`, exit 4) rather than run as you, as git refuses another user's
repository. Every other command talks to a platform over HTTP and needs nothing else.

The next steps \`init\` prints, the README it writes and \`publish\`'s call and deploy lines say
\`agenthost …\`, so they run as copied from any directory once the CLI is installed.

## Where it connects, and as whom

Each setting is taken from the first of: the flag, the environment variable, the profile in the
config file, the default.

| Setting | Flag | Variable | Profile field | Default |
| --- | --- | --- | --- | --- |
| Platform URL | \`--url\` | \`AGENTHOST_URL\` | \`url\` | \`http://127.0.0.1:8787\` |
| API key | \`--api-key\` | \`AGENTHOST_API_KEY\` | \`api_key\` | none |
| Workspace | \`-w, --workspace\` | \`AGENTHOST_WORKSPACE\` | \`workspace\` | your personal workspace |
| Profile | \`--profile\` | \`AGENTHOST_PROFILE\` | (the file's \`current\`) | \`default\` |
| Config file | | \`AGENTHOST_CONFIG\` | | \`$XDG_CONFIG_HOME/agenthost/config.json\` (\`~/.config/…\`) |

\`agenthost login\` checks a key against the platform before it saves it; the file is written with
mode 0600 in a 0700 directory. Keys and secret values are read from a prompt or stdin, never from
an argument (it would stay in the shell's history and the process list). When there is no key, or
the platform refuses it, and the URL is a loopback one, the hint names the owner key file of a
platform started on this machine: \`admin-api-key\` in the data dir this environment gives it
(\`PLATFORM_DATA_DIR\`, else \`./.data\`; \`aws/admin-api-key\` there for the emulated deployment),
when that file exists; never the key itself.

## Output

Data goes to stdout; progress, warnings and notes to stderr. \`--json\` prints one JSON document
(\`logs --follow --json\` prints one per line); \`call --json\` and \`run --json\` print the answer's
envelope with its HTTP headers (\`headers\`, lowercase names: \`x-request-id\`, \`x-ratelimit-*\`, …).

Names, descriptions, log lines and error messages are written by others (a workspace's owner, an
agent's author, its code), and a terminal obeys the control characters in what it prints (ESC
sequences retitle it or rewrite the screen, CR overwrites a line, BEL rings). So every C0 and C1
control character and DEL the CLI prints is shown escaped: \`\\n\`, \`\\r\`, \`\\t\`, \`\\x1b\` for C0,
\`\\u007f\` and \`\\u009b\` for DEL and C1. A table cell, a record's value, a log line and the error
line are one line each, so their newlines are escaped too; only the line breaks and tabs of what
the CLI lays out itself (tables, pretty JSON, a completion script) stay. In \`--json\` output C0
controls are JSON's own escapes and DEL and C1 are written \`\\u007f\`…\`\\u009f\`, so it parses
back to the same strings. Backslashes are printed as they are.

A failure prints one line, \`agenthost: CODE: message (fix: …)\`, and exits with the code below;
\`--debug\` adds the stack and its causes. \`CODE\` is the platform's error code; a failure found by
the CLI itself has the platform's code for the same exit code (\`INVALID_INPUT\` for a mistake in
the command line, \`NOT_FOUND\` for an agent or workspace it cannot find, \`UNAUTHORIZED\` for no
key, \`FORBIDDEN\` for a role that may not), or one of its own: \`INVALID_CONFIG\` (the platform's
settings, a line for each bad variable), \`UNREACHABLE\` (no platform at the URL), \`SERVICE_FAILED\`
and \`TIMEOUT\` (a service that paused or did not start in time), \`CANCELLED\` (Ctrl-C at a prompt,
exit 130), \`INTERNAL_ERROR\` (anything unexpected).

## Start-up

The installed CLI is one compiled file (and the pieces only some commands load, such as tar for
\`publish\`), so \`agenthost --version\` takes about 0.1 s of CPU over Node's own start, a quarter of
what the CLI run from source takes: \`npm run bench:cli-start\` times it (docs/performance.md,
"CLI start"). Run from source in the clone, Node compiles the CLI's
modules each time it starts, which is most of a short command's time (0.8 s of
\`agenthost --help\` on the 2-core CI machine). Two things keep that down:

- The CLI keeps V8's code cache on disk (\`module.enableCompileCache\`), so every start after the
  first skips compiling. The cache is per user, in \`$XDG_CACHE_HOME/agenthost/node-compile-cache\`
  (\`~/.cache/…\`), never in the shared temporary directory, where another user could plant code we
  would run. \`NODE_COMPILE_CACHE=<dir>\` moves it, \`NODE_DISABLE_COMPILE_CACHE=1\` turns it off, and
  deleting the directory is always safe. \`npm test\` points every process it starts (the test
  files, the CLI and the platforms they spawn) at one cache in
  \`node_modules/.cache/node-compile-cache\`, which halves the CLI tests' time.
- A command loads only what it runs: the command tree names its choices (tiers, roles, task
  statuses, usage groups) from small modules of names (\`core/*/…-names.ts\`, \`ports/tiers.ts\`), and
  what a command needs of the platform's schemas (zod), the settings or tar is imported inside its
  action. \`agenthost --help\` or \`tasks list\` loads 110 modules where loading them all at the top
  would load 225 (zod alone is 95), and takes 0.38 s of CPU instead of 0.63, measured side by side;
  for the CLI's tests (\`test/cli/\`, 73 tests, 350 or so CLI starts) that is 306 s of CPU and 167 s
  instead of 418 s and 228 s.

## Exit codes

| Code | Meaning |
| ---: | --- |
`;

/** Every command under `program`, depth first, in the order help lists them. */
function commands(program: Command): Command[] {
  const out: Command[] = [];
  const walk = (cmd: Command) => {
    for (const sub of [...cmd.commands].sort((a, b) => a.name().localeCompare(b.name()))) {
      if (sub.name() === 'help') continue;
      out.push(sub);
      walk(sub);
    }
  };
  walk(program);
  return out;
}

/**
 * The CLI's program with its help captured rather than printed, at the reference's fixed width.
 * `help(cmd)` is what `agenthost … cmd --help` shows.
 */
function referenceProgram(version: string): { program: Command; help: (cmd: Command) => string } {
  let captured = '';
  const io: CliIo = {
    env: {},
    stdout: { write: (s: string) => (captured += s) },
    stderr: { write: () => true },
    stdin: process.stdin,
  };
  const { program } = buildProgram(io, version, { helpWidth: 100 });
  const help = (cmd: Command) => {
    captured = '';
    cmd.outputHelp();
    return captured.trimEnd();
  };
  return { program, help };
}

/**
 * The commands that run something (no subcommands) with their `--help` text as a user sees it, for
 * checks over the whole tree (test/cli/cli-reference.test.ts: every one shows an example).
 */
export function leafCommands(): { command: Command; path: string; help: string }[] {
  const { program, help } = referenceProgram('0.0.0');
  return commands(program)
    .filter((c) => c.commands.length === 0)
    .map((command) => ({ command, path: commandPath(command), help: help(command) }));
}

export function cliReference(version: string): string {
  const { program, help } = referenceProgram(version);
  const exitRows = (Object.keys(EXIT) as (keyof typeof EXIT)[])
    .map((k) => `| ${EXIT[k]} | ${EXIT_MEANINGS[k]} |`)
    .join('\n');
  const all = commands(program);
  const index = all.map(
    (c) =>
      `- [\`agenthost ${commandPath(c)}\`](#${anchor(commandPath(c))}): ${c.summary() || c.description()}`,
  );
  // The global options are listed once, under the top-level help, not again under every command.
  const withoutGlobals = (text: string) => text.replace(/\n\nGlobal Options:\n(?: {2}.*\n?)+/, '\n');
  const sections = all.map(
    (c) => `### agenthost ${commandPath(c)}\n\n\`\`\`text\n${withoutGlobals(help(c)).trimEnd()}\n\`\`\``,
  );
  return `${INTRO}${exitRows}\n\n## Commands\n\n${index.join('\n')}\n\n\`\`\`text\n${help(program)}\n\`\`\`\n\n${sections.join('\n\n')}\n`;
}

function anchor(path: string): string {
  return `agenthost-${path.replace(/\s+/g, '-')}`;
}
