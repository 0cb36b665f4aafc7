/**
 * Code bundle extraction (extractBundle, functions/shared/bundle-archive/extract.ts): files, modes
 * and links written, unsafe bundles refused with nothing written outside the destination, limits.
 */
import assert from 'node:assert/strict';
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { extractBundle } from '../../functions/shared/bundle-archive/extract.ts';
import { BundleExtractionError } from '../../functions/shared/bundle-archive/refusal.ts';
import { SMALL_PROJECT as FILES, smallProjectBundles, tarGz, zipOf } from '../helpers/bundles.ts';

let work: string;
/** node-tar's output for a small project: files, an executable, a link inside the root. */
let goodTarGz: Buffer;
let goodZip: Buffer;

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'agenthost-bundle-'));
  ({ tarGz: goodTarGz, zip: goodZip } = await smallProjectBundles());
});

after(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('extractBundle', () => {
  let n = 0;
  const freshDest = async () => {
    const outer = join(work, `extract-${n++}`);
    await mkdir(outer);
    return { outer, dest: join(outer, 'dest') };
  };

  it('extracts a tar.gz: files, modes without setuid, links', async () => {
    const { dest } = await freshDest();
    const data = tarGz([
      { name: 'src/', type: '5', mode: 0o777 },
      { name: 'src/index.js', content: 'index', mode: 0o4755 },
      { name: 'src/data.txt', content: 'data', mode: 0o666 },
      { name: 'lib', type: '2', linkname: 'src' },
      { name: 'src/copy.js', type: '1', linkname: 'src/index.js' },
    ]);
    await extractBundle(data, 'tar.gz', dest);
    assert.deepEqual((await readdir(dest)).sort(), ['lib', 'src']);
    assert.deepEqual((await readdir(join(dest, 'src'))).sort(), ['copy.js', 'data.txt', 'index.js']);
    assert.equal(await readFile(join(dest, 'src/index.js'), 'utf8'), 'index');
    assert.equal((await stat(join(dest, 'src/index.js'))).mode & 0o7777, 0o755);
    assert.equal((await stat(join(dest, 'src/data.txt'))).mode & 0o7777, 0o644);
    assert.equal((await stat(join(dest, 'src'))).mode & 0o7777, 0o755);
    assert.ok((await lstat(join(dest, 'lib'))).isSymbolicLink());
    assert.equal(await readlink(join(dest, 'lib')), 'src');
    assert.equal((await stat(join(dest, 'src/copy.js'))).ino, (await stat(join(dest, 'src/index.js'))).ino);
  });

  it('extracts the node-tar and yazl bundles', async () => {
    for (const [data, format] of [
      [goodTarGz, 'tar.gz'],
      [goodZip, 'zip'],
    ] as const) {
      const { dest } = await freshDest();
      await extractBundle(data, format, dest);
      for (const [path, content] of Object.entries(FILES)) {
        assert.equal(await readFile(join(dest, path), 'utf8'), content, `${format} ${path}`);
      }
      assert.equal((await stat(join(dest, 'bin/run.sh'))).mode & 0o777, 0o755, format);
      assert.equal((await stat(join(dest, 'package.json'))).mode & 0o777, 0o644, format);
      assert.equal(await readlink(join(dest, 'lib')), 'src', format);
      assert.equal(await readFile(join(dest, 'lib/index.js'), 'utf8'), FILES['src/index.js']);
    }
  });

  it('extracts a larger file intact', async () => {
    const { dest } = await freshDest();
    const big = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7) & 0xff;
    await extractBundle(tarGz([{ name: 'big.bin', content: big }]), 'tar.gz', dest);
    assert.ok((await readFile(join(dest, 'big.bin'))).equals(big));
  });

  it('extracts many files of mixed sizes intact (tar and zip)', async () => {
    const specs = Array.from({ length: 300 }, (_, i) => ({
      name: `d${i % 7}/f${i}.txt`,
      content: `${i}:`.repeat(i % 50 === 0 ? 40_000 : (i % 13) + 1),
    }));
    const zip = await zipOf(specs);
    for (const [data, format] of [
      [tarGz(specs), 'tar.gz'],
      [zip, 'zip'],
    ] as const) {
      const { dest } = await freshDest();
      await extractBundle(data, format, dest);
      for (const spec of specs) {
        assert.equal(await readFile(join(dest, spec.name), 'utf8'), spec.content, `${format} ${spec.name}`);
      }
    }
  });

  it('refuses unsafe bundles and writes nothing outside destDir', async () => {
    const bad: [Buffer, 'tar.gz' | 'zip'][] = [
      [
        tarGz([
          { name: 'ok.js', content: 'x' },
          { name: '../evil', content: 'x' },
        ]),
        'tar.gz',
      ],
      [
        tarGz([
          { name: 'ok.js', content: 'x' },
          { name: 'link', type: '2', linkname: '../..' },
        ]),
        'tar.gz',
      ],
      [
        tarGz([
          { name: 'link', type: '2', linkname: '.' },
          { name: 'link/../../evil', content: 'x' },
        ]),
        'tar.gz',
      ],
      [await zipOf([{ name: 'QQ/evil', content: 'x' }], { 'QQ/evil': '../evil' }), 'zip'],
      [
        await zipOf([
          { name: 'link', content: '/tmp', mode: 0o120777 },
          { name: 'ok', content: 'x' },
        ]),
        'zip',
      ],
    ];
    for (const [data, format] of bad) {
      const { outer, dest } = await freshDest();
      await assert.rejects(extractBundle(data, format, dest), (err: unknown) => {
        assert.ok(err instanceof BundleExtractionError);
        assert.equal(err.code, 'UNPROCESSABLE');
        return true;
      });
      assert.deepEqual(await readdir(outer), [], 'nothing written, not even destDir');
    }
    // And the wrong format for the bytes is refused too.
    const { dest } = await freshDest();
    await assert.rejects(extractBundle(goodTarGz, 'zip', dest), BundleExtractionError);
  });

  it('refuses a destination that is not empty', async () => {
    const { dest } = await freshDest();
    await mkdir(dest);
    await writeFile(join(dest, 'existing'), 'x');
    await assert.rejects(extractBundle(goodTarGz, 'tar.gz', dest), /not empty/);
  });

  it('applies the limits it is given', async () => {
    const { dest } = await freshDest();
    await assert.rejects(
      extractBundle(goodTarGz, 'tar.gz', dest, { maxEntries: 2 }),
      (err: unknown) => err instanceof BundleExtractionError && /more than 2 entries/.test(err.message),
    );
  });
});
