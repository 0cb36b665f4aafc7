/**
 * A run's directory under the runs directory, for both local sandboxes: created with the bundle
 * and the call's files in its working directory (measured, as the baseline of the disk limit),
 * removed at close even when the run made it unwritable, and cleared at start-up when a crashed
 * platform left it behind (removeStaleRuns).
 */
import { realpathSync } from 'node:fs';
import { chmod, lchown, lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { SessionSpec } from '../../../ports/sandbox.ts';
import { extractBundle } from '../../../shared/bundle-archive/extract.ts';
import { endStalePastas } from '../pasta-network.ts';
import { HostWorkDir, type Owner } from './host-work-dir.ts';

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Removes what a previous platform process left in the runs directory (run directories of sessions
 * that were open when it died; their processes died with it through --die-with-parent). Call it at
 * start-up, before any session opens; returns how many it removed.
 */
export async function removeStaleRuns(runsDir: string): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir(runsDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  // Their sandboxes died with the platform; the pasta daemons of egress runs did not.
  await endStalePastas(runsDir);
  for (const entry of entries) await removeTree(join(runsDir, entry));
  return entries.length;
}

export interface PreparedRun {
  runDir: string;
  /** The working directory on the host (realpath). */
  work: HostWorkDir;
  /** Bytes and entries in the working directory once the bundle and files are in. */
  baseline: { bytes: number; entries: number };
}

/** Puts a bundle's files into a directory that does not exist yet (extracted-bundles.ts). */
export type PlaceBundle = (
  bundle: { data: Buffer; format: 'tar.gz' | 'zip' },
  dest: string,
  owner: Owner | undefined,
) => Promise<void>;

export async function prepareRun(
  runsDir: string,
  spec: SessionSpec,
  owner: Owner | undefined,
  placeBundle?: PlaceBundle,
): Promise<PreparedRun> {
  validateSpec(spec);
  await mkdir(runsDir, { recursive: true, mode: 0o700 });
  const runDir = join(realpathSync(runsDir), spec.runId);
  // Not recursive: a second session with the same run id is refused here.
  await mkdir(runDir, { mode: 0o700 });
  try {
    const workPath = join(runDir, 'work');
    if (spec.bundle && placeBundle) {
      // Copied from the bundle's extracted tree, chowned on the way.
      await placeBundle(spec.bundle, workPath, owner);
      await chmod(workPath, 0o700);
    } else {
      if (spec.bundle) await extractBundle(spec.bundle.data, spec.bundle.format, workPath);
      else await mkdir(workPath, { mode: 0o700 });
      await chmod(workPath, 0o700);
      if (owner) await chownTree(workPath, owner);
    }
    const work = new HostWorkDir(workPath, owner);
    for (const file of spec.files ?? []) await work.writeFile(file.path, file.data);
    const baseline = await work.usage(Number.POSITIVE_INFINITY);
    return { runDir, work, baseline };
  } catch (err) {
    await removeTree(runDir);
    throw err;
  }
}

function validateSpec(spec: SessionSpec): void {
  if (!RUN_ID.test(spec.runId)) {
    throw new Error(`Run id ${JSON.stringify(spec.runId)} is not 1-128 letters, digits, '.', '_' or '-'`);
  }
  for (const [name, value] of Object.entries(spec.env)) {
    if (!ENV_NAME.test(name))
      throw new Error(`Environment variable name ${JSON.stringify(name)} is not valid`);
    if (typeof value !== 'string' || value.includes('\0')) {
      throw new Error(`Environment variable ${name} has a value that cannot be passed to a process`);
    }
  }
  const limits = spec.limits;
  for (const key of ['cpuSeconds', 'memoryBytes', 'processes', 'outputBytes', 'diskBytes'] as const) {
    const value = limits[key];
    if (!Number.isSafeInteger(value) || value < 1)
      throw new Error(`Sandbox limit ${key} must be a positive integer`);
  }
  if (spec.network !== 'none' && spec.network !== 'egress')
    throw new Error('Sandbox network must be none or egress');
  for (const port of spec.hostLoopbackPorts ?? []) {
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new Error(`Host loopback port ${JSON.stringify(port)} is not a TCP port`);
  }
}

async function chownTree(path: string, owner: Owner): Promise<void> {
  const stat = await lstat(path);
  // lchown: a symlink of the bundle is changed itself, never what it points to.
  await lchown(path, owner.uid, owner.gid);
  if (stat.isDirectory()) {
    for (const entry of await readdir(path)) await chownTree(join(path, entry), owner);
  }
}

/** Removes a run directory even when the run left directories without write permission. */
export async function removeTree(path: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true });
    return;
  } catch {
    await makeWritable(path).catch(() => {});
  }
  await rm(path, { recursive: true, force: true });
}

async function makeWritable(path: string): Promise<void> {
  const stat = await lstat(path);
  if (!stat.isDirectory()) return;
  await chmod(path, 0o700);
  for (const entry of await readdir(path)) await makeWritable(join(path, entry)).catch(() => {});
}
