/**
 * lib/esbuild-cache.ts on a project of its own: a build is reused for another outdir, its
 * metafile moved there; a changed input, option or lockfile builds again; an input written after
 * the build began is not stored; a lock left by a dead process is taken over.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cachedBuildSync } from '../../lib/esbuild-cache.ts';

describe('a cached esbuild build', () => {
  const root = mkdtempSync(join(tmpdir(), 'agenthost-esbuild-cache-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const cacheDir = join(root, 'node_modules', '.cache', 'agenthost-esbuild');
  const options = (outdir: string, extra: Record<string, unknown> = {}) => ({
    entryPoints: { index: join(root, 'src', 'a.ts') },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm' as const,
    platform: 'node' as const,
    chunkNames: 'chunks/[name]-[hash]',
    absWorkingDir: root,
    logLevel: 'silent' as const,
    ...extra,
  });
  mkdirSync(join(root, 'src'), { recursive: true });
  writeFileSync(
    join(root, 'src', 'a.ts'),
    "import { b } from './b.ts';\nexport const a = async () => b + (await import('./c.ts')).c;\n",
  );
  writeFileSync(join(root, 'src', 'b.ts'), "export const b = 'first';\n");
  writeFileSync(join(root, 'src', 'c.ts'), "export const c = 'lazy';\n");
  writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion":3}');
  // Written a minute ago: a build is stored only when no input was written just before it.
  const aMinuteAgo = () => new Date(Date.now() - 60_000);
  for (const f of ['a.ts', 'b.ts', 'c.ts']) utimesSync(join(root, 'src', f), aMinuteAgo(), aMinuteAgo());
  const text = (files: { path: string; contents: Uint8Array }[]) =>
    files.map((f) => Buffer.from(f.contents).toString('utf8')).join('\n');
  const entries = () => readdirSync(cacheDir).filter((n) => !n.endsWith('.lock'));
  /** Marks every stored output, so that a reused build is told from a new one. */
  const markStored = () => {
    for (const entry of entries()) {
      for (const f of readdirSync(join(cacheDir, entry, 'files'))) {
        writeFileSync(join(cacheDir, entry, 'files', f), `/* from the cache */ ${f}`);
      }
    }
  };

  test('is reused for another outdir, its output paths and metafile moved there', () => {
    const first = cachedBuildSync(options('out/one'));
    assert.match(text(first.files), /first/);
    assert.ok(first.files.some((f) => f.path === join(root, 'out/one/index.js')));
    markStored();
    const second = cachedBuildSync(options('out/two'));
    assert.match(text(second.files), /from the cache/, 'the stored build, not a new one');
    assert.deepEqual(
      second.files.map((f) => f.path).sort(),
      first.files.map((f) => f.path.replace('/out/one/', '/out/two/')).sort(),
    );
    assert.deepEqual(
      Object.keys(second.metafile.outputs).sort(),
      Object.keys(first.metafile.outputs)
        .map((k) => k.replace('out/one/', 'out/two/'))
        .sort(),
    );
    const entry = second.metafile.outputs['out/two/index.js'];
    assert.ok(
      entry?.imports.some((i) => i.path.startsWith('out/two/chunks/')),
      JSON.stringify(entry?.imports),
    );
  });

  test('builds again when an input, an option or the lockfile changes', () => {
    markStored();
    writeFileSync(join(root, 'src', 'c.ts'), "export const c = 'changed lazy chunk';\n");
    utimesSync(join(root, 'src', 'c.ts'), aMinuteAgo(), aMinuteAgo());
    assert.match(text(cachedBuildSync(options('out/three')).files), /changed lazy chunk/);
    markStored();
    assert.doesNotMatch(
      text(cachedBuildSync(options('out/three', { minify: true })).files),
      /from the cache/,
    );
    markStored();
    writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion":3,"packages":{}}');
    assert.doesNotMatch(text(cachedBuildSync(options('out/three')).files), /from the cache/);
  });

  test('is not stored when an input was written after the build began, and is built again next time', () => {
    rmSync(cacheDir, { recursive: true, force: true });
    writeFileSync(join(root, 'src', 'b.ts'), "export const b = 'second';\n");
    // Its mtime ahead of the build's start: as if written while esbuild read it.
    utimesSync(join(root, 'src', 'b.ts'), new Date(), new Date(Date.now() + 60_000));
    assert.match(text(cachedBuildSync(options('out/four')).files), /second/);
    assert.deepEqual(entries(), [], 'nothing stored');
  });

  test('takes over a lock a dead process left', () => {
    utimesSync(join(root, 'src', 'b.ts'), aMinuteAgo(), aMinuteAgo());
    cachedBuildSync(options('out/five'));
    const [key] = entries();
    assert.ok(key);
    rmSync(join(cacheDir, key), { recursive: true, force: true });
    mkdirSync(join(cacheDir, `${key}.lock`));
    // A pid above the kernel's largest: no process has it.
    writeFileSync(join(cacheDir, `${key}.lock`, 'pid'), '4194305');
    assert.match(text(cachedBuildSync(options('out/six')).files), /second/);
    assert.deepEqual(entries(), [key], 'built and stored under the lock');
    // A lock with no pid, long past: its taker died between making it and writing its pid.
    rmSync(join(cacheDir, key), { recursive: true, force: true });
    mkdirSync(join(cacheDir, `${key}.lock`));
    utimesSync(join(cacheDir, `${key}.lock`), aMinuteAgo(), aMinuteAgo());
    assert.match(text(cachedBuildSync(options('out/seven')).files), /second/);
    assert.deepEqual(entries(), [key], 'built and stored under the lock');
  });
});
