/**
 * Bundles are extracted once and copied into each run (functions/adapters/local/bwrap/
 * extracted-bundles.ts): a second run of the same bundle does not extract it again, yet gets a
 * writable copy of its own, which another run never sees changed; the cache is bounded, and a
 * cleared runs directory is extracted again. Needs bwrap, as test/adapters/sandbox-isolation.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ExtractedBundles } from '../../functions/adapters/local/bwrap/extracted-bundles.ts';
import { removeStaleRuns } from '../../functions/adapters/local/bwrap/run-dir.ts';
import { BwrapSandbox, UnisolatedSandbox } from '../../functions/adapters/local/bwrap/sandboxes.ts';
import { DEFAULT_SANDBOX_LIMITS, type SessionSpec } from '../../functions/ports/sandbox.ts';
import { tarGzOf } from '../helpers/bundles.ts';

let dir: string;
let counter = 0;

/** A project of `files` with a `lib` link to `src`, as node-tar packs it. */
const bundleOf = (files: Record<string, string>) => tarGzOf(files, { lib: 'src' });

function spec(bundle: Buffer): SessionSpec {
  return {
    runId: `bundles-${process.pid}-${++counter}`,
    workspaceId: 'ws-a',
    bundle: { data: bundle, format: 'tar.gz' },
    env: {},
    network: 'none',
    deadlineMs: Date.now() + 30_000,
    limits: DEFAULT_SANDBOX_LIMITS,
  };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agenthost-bundles-'));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('extracted bundles', () => {
  it('a second run of the same bundle copies it without extracting, and each run has its own writable copy', async () => {
    const runsDir = join(dir, 'runs');
    const sandbox = new BwrapSandbox({ runsDir });
    const bundle = await bundleOf({ 'src/index.js': 'original\n', 'run.sh': '#!/bin/sh\necho ran\n' });
    const first = await sandbox.openSession(spec(bundle));
    try {
      const seen = await first.exec(
        'cat src/index.js lib/index.js; ./run.sh; echo changed > src/index.js; id -u; stat -c %a . src run.sh src/index.js',
      );
      assert.equal(seen.stdout, 'original\noriginal\nran\n1000\n700\n755\n755\n644\n', seen.stderrTail);
      assert.equal((await first.readFile('src/index.js')).toString(), 'changed\n');
    } finally {
      await first.close();
    }
    const second = await sandbox.openSession(spec(bundle));
    try {
      assert.equal(
        (await second.exec('cat src/index.js')).stdout,
        'original\n',
        "the first run's change is its own",
      );
      assert.deepEqual(await second.listFiles(), ['run.sh', 'src/index.js']);
    } finally {
      await second.close();
    }
    assert.equal(sandbox.bundles.extractions, 1, 'extracted once for both runs');

    const other = await sandbox.openSession(spec(await bundleOf({ 'src/index.js': 'other\n' })));
    await other.close();
    assert.equal(sandbox.bundles.extractions, 2, 'another bundle is extracted');

    // The runs directory cleared at start-up: the bundle is extracted again.
    await removeStaleRuns(runsDir);
    const again = await sandbox.openSession(spec(bundle));
    try {
      assert.equal((await again.exec('cat src/index.js')).stdout, 'original\n');
    } finally {
      await again.close();
    }
    assert.equal(sandbox.bundles.extractions, 3);
  });

  it('the unisolated sandbox reuses them too', async () => {
    const sandbox = new UnisolatedSandbox({ runsDir: join(dir, 'plain-runs') });
    const bundle = await bundleOf({ 'src/index.js': 'plain\n' });
    for (let i = 0; i < 2; i++) {
      const session = await sandbox.openSession(spec(bundle));
      try {
        assert.equal((await session.exec('cat lib/index.js')).stdout, 'plain\n');
      } finally {
        await session.close();
      }
    }
    assert.equal(sandbox.bundles.extractions, 1);
  });

  it('keeps at most maxEntries bundles, the least recently used evicted', async () => {
    const runsDir = join(dir, 'bounded');
    const bundles = new ExtractedBundles(runsDir, 2);
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((n) => bundleOf({ [`${n}.txt`]: n })));
    const place = (data: Buffer) =>
      bundles.place({ data, format: 'tar.gz' }, join(dir, `dest-${++counter}`), undefined);
    await place(a!);
    await place(b!);
    await place(a!); // a is now the most recently used
    await place(c!); // b goes
    assert.equal(bundles.extractions, 3);
    assert.equal((await readdir(join(runsDir, '.bundles'))).length, 2);
    await place(a!);
    assert.equal(bundles.extractions, 3, 'a was kept');
    await place(b!);
    assert.equal(bundles.extractions, 4, 'b was evicted and is extracted again');
    assert.ok(existsSync(join(runsDir, '.bundles')));
  });
});
