/**
 * The checkout a bench compares this one with, side by side in one run: BENCH_BASELINE=<commit>
 * (any name git knows: a hash, a tag, `HEAD~3`) checks that commit out for the run, or
 * BENCH_BASELINE_DIR=<checkout> names one already there. A named commit is what a comparison
 * across many changes needs: a target such as "a call costs no more than it did at <commit>" is
 * measured against that commit itself, not against the commit before each change.
 *
 * The commit is checked out with `git worktree add` in a temporary directory (removed when the
 * bench ends). Its packages: when its package-lock.json is this checkout's, a link to this
 * checkout's node_modules (the same packages, installed once); otherwise `npm ci` there, as its
 * own clone would have them.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface BaselineCheckout {
  dir: string;
  /** The commit checked out there, short. */
  commit: string;
  /** Removes what was checked out for the run (nothing for BENCH_BASELINE_DIR). */
  close(): void;
}

const git = (args: string[], cwd = ROOT) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** The short commit a checkout is at. */
export const commitOf = (dir: string): string => git(['rev-parse', '--short', 'HEAD'], dir);

/** The baseline the environment names, from the repository at `root`, ready to run; undefined when it names none. */
export function baselineCheckout(
  env: Record<string, string | undefined> = process.env,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  root = ROOT,
): BaselineCheckout | undefined {
  const named = env.BENCH_BASELINE;
  if (!named) {
    const dir = env.BENCH_BASELINE_DIR;
    return dir ? { dir: resolve(dir), commit: commitOf(dir), close: () => {} } : undefined;
  }
  let commit: string;
  try {
    commit = git(['rev-parse', '--short', '--verify', `${named}^{commit}`], root);
  } catch {
    throw new Error(`BENCH_BASELINE=${named}: this repository has no such commit`);
  }
  const dir = join(mkdtempSync(join(tmpdir(), 'agenthost-baseline-')), commit);
  log(`BENCH_BASELINE=${named}: checking out ${commit} in ${dir}`);
  git(['worktree', 'add', '--detach', dir, commit], root);
  const close = () => {
    git(['worktree', 'remove', '--force', dir], root);
    rmSync(resolve(dir, '..'), { recursive: true, force: true });
  };
  try {
    const sameLock = git(['diff', '--name-only', commit, 'HEAD', '--', 'package-lock.json'], root) === '';
    if (sameLock) symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
    else {
      log(`its package-lock.json differs from this checkout's: npm ci there`);
      execFileSync('npm', ['ci', '--no-audit', '--no-fund'], {
        cwd: dir,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    }
  } catch (err) {
    close();
    throw err;
  }
  return { dir, commit, close };
}

/**
 * A bench's "before" and "after" rows: `row` run on the baseline the environment names (labelled
 * with BENCH_BASELINE_LABEL, else its commit), then on this checkout, the baseline removed after.
 * `commits` is the sentence the table says them in (empty without a baseline).
 */
export async function beforeAndAfter<T>(
  row: (label: string, dir: string) => Promise<T>,
): Promise<{ rows: T[]; commits: string }> {
  const baseline = baselineCheckout();
  const rows: T[] = [];
  try {
    if (baseline)
      rows.push(await row(`before (${process.env.BENCH_BASELINE_LABEL ?? baseline.commit})`, baseline.dir));
    rows.push(await row('after (this checkout)', ROOT));
  } finally {
    baseline?.close();
  }
  const commits = baseline
    ? ` "before" is commit ${baseline.commit}, this checkout is ${commitOf(ROOT)}.`
    : '';
  return { rows, commits };
}
