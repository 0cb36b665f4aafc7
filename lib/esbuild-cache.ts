import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { type BuildOptions, buildSync, type Metafile, version } from 'esbuild';
import { processAlive } from '../functions/shared/process-alive.ts';

/**
 * An esbuild build kept on disk and reused while every file it read is unchanged. One synthesis
 * bundles every Lambda handler (about a dozen CPU-seconds), and a test run synthesizes several times
 * (the CDK tests, the emulated deployment's assembly) besides CI's bundle-size check and the
 * bundle tests: each bundled the same files again. The platform-function construct, the container
 * programs, bench/bundle-sizes.ts and test/cdk/handler-bundles.test.ts build through here, so
 * what a test reads is what the construct deploys.
 *
 * A build is reused only when esbuild's version, its options (all but where it writes), the
 * lockfile, package.json and tsconfig.json are the same and every input its metafile lists has the same content
 * (sha-256). Resolution also reads what the metafile does not list (packages' package.json, which
 * files exist): in node_modules those change with the lockfile, and the platform's own imports name
 * their files whole (`./x.ts`, as Node's type stripping requires), so a new file cannot take an
 * import's place unseen. The cache lives in node_modules/.cache/agenthost-esbuild (npm ci empties
 * it; removing it is always safe). A reused build prints none of the warnings its first build did.
 */

/** Bumped when what an entry holds changes shape. */
const ENTRY_FORMAT = 1;
/** Stands for the build's outdir in a stored metafile's output paths (each build writes elsewhere). */
const OUTDIR = '<outdir>';
/** How close to a build's start an input's time must not be for the build to be stored. */
const MTIME_MARGIN_MS = 2000;
/** A lock this old with no pid in it was left by a process that died taking it. */
const PIDLESS_LOCK_MS = 10_000;
/** How long a process waits for another that is building the same entry. */
const LOCK_WAIT_MS = 120_000;

export interface CachedBuild {
  /** The output files, with the paths esbuild gives them for this build's outdir. */
  files: { path: string; contents: Uint8Array }[];
  metafile: Metafile;
}

interface Entry {
  format: number;
  /** This entry's own: read again after its files, it tells a reader the entry was not replaced meanwhile. */
  id: string;
  /** Each input's path (relative to absWorkingDir, as in the metafile) and its content's sha-256. */
  inputs: Record<string, string>;
  /** The metafile, its output paths relative to the outdir under OUTDIR. */
  metafile: Metafile;
  /** The output files, in order: relative to the outdir, or esbuild's own name without one. */
  files: string[];
}

type Options = BuildOptions & { absWorkingDir: string };

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex');
const slash = (path: string) => path.split(sep).join('/');

function readOrEmpty(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch {
    return Buffer.alloc(0);
  }
}

function keyOf(options: Options): string {
  const { outdir: _o, write: _w, metafile: _m, logLevel: _l, ...rest } = options;
  if (rest.plugins?.length)
    throw new Error('a cached esbuild build takes no plugins (its key is its options)');
  const cwd = options.absWorkingDir;
  return sha256(
    [
      JSON.stringify({ ENTRY_FORMAT, version, rest }),
      sha256(readOrEmpty(join(cwd, 'package-lock.json'))),
      sha256(readOrEmpty(join(cwd, 'tsconfig.json'))),
      // Its `type`, `imports` and `sideEffects` change what esbuild makes of the platform's own files.
      sha256(readOrEmpty(join(cwd, 'package.json'))),
    ].join('\n'),
  ).slice(0, 32);
}

/** An input esbuild read from disk (not a namespace of its own, such as `(disabled):fs`). */
const isFileInput = (path: string) => !/^[<(]|^[a-z-]+:/.test(path);

function unchanged(entry: Entry, cwd: string): boolean {
  if (entry.format !== ENTRY_FORMAT) return false;
  for (const [path, digest] of Object.entries(entry.inputs)) {
    if (!isFileInput(path)) continue;
    let content: Buffer;
    try {
      content = readFileSync(join(cwd, path));
    } catch {
      return false;
    }
    if (sha256(content) !== digest) return false;
  }
  return true;
}

/** Rewrites the output paths of a metafile (keys and chunk imports) from one outdir prefix to another. */
function movedOutputs(metafile: Metafile, from: string, to: string): Metafile {
  const move = (path: string) => (path.startsWith(`${from}/`) ? `${to}${path.slice(from.length)}` : path);
  const outputs: Metafile['outputs'] = {};
  for (const [path, output] of Object.entries(metafile.outputs)) {
    outputs[move(path)] = {
      ...output,
      imports: output.imports.map((i) => (i.external ? i : { ...i, path: move(i.path) })),
    };
  }
  return { inputs: metafile.inputs, outputs };
}

function outdirOf(options: Options): { abs: string; rel: string } | undefined {
  if (!options.outdir) return undefined;
  const abs = resolve(options.absWorkingDir, options.outdir);
  return { abs, rel: slash(relative(options.absWorkingDir, abs)) };
}

function load(dir: string, options: Options): CachedBuild | undefined {
  let entry: Entry;
  try {
    entry = JSON.parse(readFileSync(join(dir, 'entry.json'), 'utf8')) as Entry;
    if (!unchanged(entry, options.absWorkingDir)) return undefined;
    const out = outdirOf(options);
    const files = entry.files.map((name, i) => ({
      path: out ? join(out.abs, name) : name,
      contents: readFileSync(join(dir, 'files', String(i))),
    }));
    const after = JSON.parse(readFileSync(join(dir, 'entry.json'), 'utf8')) as Entry;
    if (after.id !== entry.id) return undefined;
    return { files, metafile: out ? movedOutputs(entry.metafile, OUTDIR, out.rel) : entry.metafile };
  } catch {
    // Missing, or replaced while read: build.
    return undefined;
  }
}

/**
 * Stores a build begun at `startedMs`, unless an input was written since or just before (its
 * output may be of the old content). A file put in place with an old time (`cp -p`, `rsync -t`)
 * while esbuild read it is not seen: such a copy during a build is the one case this misses.
 */
function store(dir: string, options: Options, built: CachedBuild, startedMs: number): void {
  const cwd = options.absWorkingDir;
  const inputs: Record<string, string> = {};
  for (const path of Object.keys(built.metafile.inputs)) {
    if (!isFileInput(path)) {
      inputs[path] = '';
      continue;
    }
    // Hashed first, then its time looked at: a write after the look changes the time, one before
    // it the hash. Some filesystems keep times to the second, hence the margin.
    inputs[path] = sha256(readOrEmpty(join(cwd, path)));
    try {
      if (statSync(join(cwd, path)).mtimeMs >= startedMs - MTIME_MARGIN_MS) return;
    } catch {
      return;
    }
  }
  const out = outdirOf(options);
  const entry: Entry = {
    format: ENTRY_FORMAT,
    id: `${process.pid}-${Date.now()}-${Math.random()}`,
    inputs,
    metafile: out ? movedOutputs(built.metafile, out.rel, OUTDIR) : built.metafile,
    files: built.files.map((f) => (out ? slash(relative(out.abs, f.path)) : f.path)),
  };
  // Written aside, then renamed into place: a reader sees a whole entry or none.
  const staging = `${dir}.${process.pid}-${Date.now()}`;
  mkdirSync(join(staging, 'files'), { recursive: true });
  built.files.forEach((f, i) => {
    writeFileSync(join(staging, 'files', String(i)), f.contents);
  });
  writeFileSync(join(staging, 'entry.json'), JSON.stringify(entry));
  rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(staging, dir);
  } catch {
    rmSync(staging, { recursive: true, force: true });
  }
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Takes the entry's lock (a directory: mkdir is atomic), waiting while another living process
 * holds it. False when the wait ran out: the caller builds anyway, unlocked.
 */
function lock(lockDir: string): boolean {
  const until = Date.now() + LOCK_WAIT_MS;
  while (Date.now() < until) {
    try {
      mkdirSync(lockDir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readOrEmpty(join(lockDir, 'pid')).toString());
      const ageMs = Date.now() - (statSync(lockDir, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      // A holder that died left its lock: take it over. A lock with no pid yet is being taken,
      // unless it has been so for long (its taker died between the two steps).
      if (holder > 0 ? !processAlive(holder) : ageMs > PIDLESS_LOCK_MS)
        rmSync(lockDir, { recursive: true, force: true });
      else pause(50);
      continue;
    }
    try {
      writeFileSync(join(lockDir, 'pid'), String(process.pid));
    } catch (err) {
      rmSync(lockDir, { recursive: true, force: true });
      throw err;
    }
    return true;
  }
  return false;
}

function build(options: Options): CachedBuild {
  const result = buildSync({ ...options, write: false, metafile: true });
  return {
    files: result.outputFiles.map((f) => ({ path: f.path, contents: f.contents })),
    metafile: result.metafile,
  };
}

/** esbuild's buildSync with `write: false` and a metafile, reused from the cache while its inputs are unchanged. */
export function cachedBuildSync(options: Options): CachedBuild {
  const root = join(options.absWorkingDir, 'node_modules', '.cache', 'agenthost-esbuild');
  const dir = join(root, keyOf(options));
  const hit = load(dir, options);
  if (hit) return hit;
  mkdirSync(root, { recursive: true });
  const lockDir = `${dir}.lock`;
  const locked = lock(lockDir);
  try {
    // Another process may have built it while this one waited.
    const stored = locked ? load(dir, options) : undefined;
    if (stored) return stored;
    const startedMs = Date.now();
    const built = build(options);
    if (locked) store(dir, options, built, startedMs);
    return built;
  } finally {
    if (locked) rmSync(lockDir, { recursive: true, force: true });
  }
}

/** Writes a build's output files where esbuild would have. */
export function writeBuild(built: CachedBuild): void {
  for (const f of built.files) {
    mkdirSync(dirname(f.path), { recursive: true });
    writeFileSync(f.path, f.contents);
  }
}
