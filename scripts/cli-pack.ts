/**
 * `npm run cli:pack [-- DIR]`: the agenthost CLI as npm installs it, `agenthost-cli-<version>.tgz`
 * in DIR (default: the current directory); prints the tarball's path. `npm run cli:install` packs
 * it and installs it globally (`npm install -g`), so `agenthost` runs from any directory.
 *
 * The package holds one JavaScript file, bin/agenthost.ts compiled with every dependency it loads
 * (esbuild, target Node 20: npm itself runs on Node 20 and up, and Node will not strip types from
 * files under node_modules), and no dependencies, so it installs offline and starts without a
 * module search. The commands that run the platform in the CLI's process (start, run, accounts
 * create) are left out: the installed CLI runs them in the clone it was packed from, whose path
 * its package.json holds (functions/cli/clone-commands.ts). The name is never fetched from a
 * registry: nobody publishes it (the package is private), it is installed from the tarball only.
 * test/cli/cli-installed.test.ts installs and runs it; bench/cli-start.ts times its start.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const { version, license } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string;
  license: string;
};

/**
 * The files of the commands that run in the clone (clone-commands.ts's CLONE_COMMANDS): what their
 * actions import when they run (the platform, its settings, the store) is never run by the
 * installed CLI, so it is left out, each import replaced by a module that says so.
 */
const RUN_IN_CLONE = ['start.ts', 'run.ts', 'accounts.ts'].map((f) =>
  join(root, 'functions/cli/commands', f),
);

/**
 * What the installed CLI must never hold, whatever a command starts to import: the platform's
 * composition, its hosts and adapters, and node:sqlite, which Node 20 does not have. The build
 * fails naming the module.
 */
const NEVER_BUNDLED =
  /^(functions\/(platform\/(?!config-error\.ts$)|local-platform\/|emulator\/|adapters\/)|node:sqlite$)/;

const leaveOutCloneCommands: Plugin = {
  name: 'leave-out-clone-commands',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) =>
      args.kind === 'dynamic-import' && RUN_IN_CLONE.includes(args.importer)
        ? { path: args.path, namespace: 'runs-in-the-clone' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'runs-in-the-clone' }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`${args.path} is not in the installed CLI: its command runs in the clone (functions/cli/clone-commands.ts)`)});`,
      loader: 'js',
    }));
  },
};

/** Compiles the CLI into `dir`/bin/agenthost.js; answers the bundle's size in bytes. */
async function bundle(dir: string): Promise<number> {
  const outfile = join(dir, 'bin', 'agenthost.js');
  const result = await build({
    entryPoints: { agenthost: join(root, 'bin', 'agenthost.ts') },
    outdir: join(dir, 'bin'),
    // What a command imports when it runs (tar, the prompt, the schemas) is a file of its own,
    // read only by the commands that use it.
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Whitespace and syntax only: --debug's stack traces keep the functions' names.
    minifyWhitespace: true,
    minifySyntax: true,
    // The bundled packages' licence notices, in bin/agenthost.js.LEGAL.txt.
    legalComments: 'external',
    metafile: true,
    logLevel: 'warning',
    absWorkingDir: root,
    // CommonJS dependencies `require()` Node's modules: ESM output needs a real require for them.
    banner: {
      js: "import { createRequire as __agenthostCreateRequire } from 'node:module'; const require = __agenthostCreateRequire(import.meta.url);",
    },
    plugins: [leaveOutCloneCommands],
  });
  const inputs = Object.keys(result.metafile.inputs);
  const imports = Object.values(result.metafile.inputs).flatMap((i) => i.imports.map((x) => x.path));
  const forbidden = [...inputs, ...imports].filter((p) => NEVER_BUNDLED.test(p));
  if (forbidden.length)
    throw new Error(
      `the installed CLI would hold the platform (${[...new Set(forbidden)].join(', ')}): import it in a command of RUN_IN_CLONE, or lazily`,
    );
  chmodSync(outfile, 0o755);
  return result.metafile.outputs[relative(root, outfile)]?.bytes ?? 0;
}

/** Packs the installed CLI into `destination`; answers the tarball's path. */
export async function packCli(destination: string): Promise<string> {
  const stage = mkdtempSync(join(tmpdir(), 'agenthost-cli-pack-'));
  try {
    mkdirSync(join(stage, 'bin'));
    await bundle(stage);
    const pkg = {
      name: 'agenthost-cli',
      version,
      description: 'The agenthost CLI, packed from a clone of agenthost (npm run cli:pack)',
      license,
      // Never published: installed from its tarball only, never by name from a registry.
      private: true,
      type: 'module',
      bin: { agenthost: 'bin/agenthost.js' },
      // path.matchesGlob (every command's code) came in 20.17: the floor npm 11 itself needs.
      engines: { node: '^20.17.0 || >=22.9.0' },
      // Who owns the clone now: the installed CLI runs its code only while they still do
      // (functions/cli/clone-commands.ts).
      agenthost: { clone: root.replace(/\/$/, ''), owner: statSync(root).uid },
    };
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
    writeFileSync(
      join(stage, 'README.md'),
      `# agenthost CLI ${version}\n\nPacked from the clone at ${pkg.agenthost.clone}, whose docs/cli.md is its reference.\n` +
        '`agenthost start`, `agenthost run` and `agenthost accounts create` run there, on its pinned Node.\n',
    );
    mkdirSync(destination, { recursive: true });
    const out = execFileSync(
      'npm',
      ['pack', stage, '--pack-destination', destination, '--json', '--ignore-scripts'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const [packed] = JSON.parse(out) as { filename: string }[];
    if (!packed) throw new Error('npm pack wrote no tarball');
    return resolve(destination, packed.filename);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const install = process.argv.includes('--install');
  const dirArg = process.argv.slice(2).find((a) => a !== '--install');
  if (install) {
    const dir = mkdtempSync(join(tmpdir(), 'agenthost-cli-'));
    try {
      const tarball = await packCli(dir);
      execFileSync('npm', ['install', '--global', tarball], { stdio: 'inherit' });
      const prefix = execFileSync('npm', ['prefix', '--global'], { encoding: 'utf8' }).trim();
      process.stdout.write(
        `installed ${join(prefix, 'bin', 'agenthost')}: run \`agenthost --help\` from any directory\n`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  } else process.stdout.write(`${await packCli(resolve(dirArg ?? '.'))}\n`);
}
