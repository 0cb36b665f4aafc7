import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { baselineCheckout, commitOf } from '../../bench/baseline-checkout.ts';

/**
 * The checkout a bench compares with (bench/baseline-checkout.ts), from what the environment names,
 * in a repository of its own made here: two commits with the same lockfile, and this checkout's
 * packages as a node_modules directory the checkout links to.
 */
describe('a bench’s baseline checkout', () => {
  const quiet = () => {};
  let repo: string;
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', ...args], {
      cwd: repo,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  const worktrees = () => git('worktree', 'list', '--porcelain');

  before(() => {
    repo = mkdtempSync(join(tmpdir(), 'agenthost-baseline-repo-'));
    git('init', '-q');
    writeFileSync(join(repo, 'package-lock.json'), '{"lockfileVersion":3}\n');
    writeFileSync(join(repo, 'version.txt'), 'first\n');
    git('add', '.');
    git('commit', '-q', '-m', 'first');
    writeFileSync(join(repo, 'version.txt'), 'second\n');
    git('commit', '-q', '-am', 'second');
    mkdirSync(join(repo, 'node_modules'));
  });
  after(() => rmSync(repo, { recursive: true, force: true }));

  it('checks out a named commit for the run, with this checkout’s packages when the lockfile is the same, and removes it after', () => {
    const first = git('rev-parse', '--short', 'HEAD~1');
    const baseline = baselineCheckout({ BENCH_BASELINE: 'HEAD~1' }, quiet, repo);
    assert.ok(baseline);
    try {
      assert.equal(baseline.commit, first);
      assert.equal(commitOf(baseline.dir), first);
      assert.equal(readFileSync(join(baseline.dir, 'version.txt'), 'utf8'), 'first\n');
      assert.ok(lstatSync(join(baseline.dir, 'node_modules')).isSymbolicLink(), 'the same packages, linked');
      assert.ok(worktrees().includes(baseline.dir));
    } finally {
      baseline.close();
    }
    assert.equal(existsSync(baseline.dir), false);
    assert.equal(worktrees().includes(baseline.dir), false);
  });

  it('takes a checkout already there as it is, and leaves it', () => {
    const baseline = baselineCheckout({ BENCH_BASELINE_DIR: repo }, quiet, repo);
    assert.ok(baseline);
    assert.equal(baseline.dir, repo);
    assert.equal(baseline.commit, git('rev-parse', '--short', 'HEAD'));
    baseline.close();
    assert.equal(readFileSync(join(repo, 'version.txt'), 'utf8'), 'second\n');
  });

  it('names none without either setting, and refuses a name git does not know', () => {
    assert.equal(baselineCheckout({}, quiet, repo), undefined);
    assert.throws(
      () => baselineCheckout({ BENCH_BASELINE: 'no-such-commit' }, quiet, repo),
      /BENCH_BASELINE=no-such-commit: this repository has no such commit/,
    );
  });
});
