/**
 * Code bundle validation (inspectBundle, functions/shared/bundle-archive/) on real archives:
 * well-formed ones from node-tar and yazl, their size and type, archive bombs and corrupt input
 * (the archives are built by test/helpers/bundles.ts). Unsafe entries: bundle-unsafe-entries.test.ts;
 * extraction: bundle-extract.test.ts.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { inspectBundle } from '../../functions/shared/bundle-archive/inspect.ts';
import { BUNDLE_LIMITS } from '../../functions/shared/bundle-limits.ts';
import {
  SMALL_PROJECT as FILES,
  rawTar,
  refused,
  smallProjectBundles,
  type TarSpec,
  tarGz,
  tarHeader,
  zipOf,
} from '../helpers/bundles.ts';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** node-tar's output for a small project: files, an executable, a link inside the root. */
let goodTarGz: Buffer;
let goodZip: Buffer;
const FILE_BYTES = Object.values(FILES).reduce((n, s) => n + Buffer.byteLength(s), 0);

before(async () => {
  ({ tarGz: goodTarGz, zip: goodZip } = await smallProjectBundles());
});

describe('inspectBundle: accepted bundles', () => {
  it('a tar.gz from node-tar, under every gzip content type and the generic ones', async () => {
    for (const type of [
      'application/gzip',
      'application/x-gzip',
      'application/x-compressed-tar',
      'application/x-tar+gzip',
      'application/tar+gzip',
      'APPLICATION/GZIP; charset=binary',
      'application/octet-stream',
      undefined,
      '',
    ]) {
      const result = await inspectBundle(goodTarGz, type);
      // package.json, src/ and its two files, bin/ and its script, the link lib
      assert.deepEqual(
        result,
        { ok: true, format: 'tar.gz', entries: 7, uncompressedBytes: FILE_BYTES, sha256: sha256(goodTarGz) },
        String(type),
      );
    }
  });

  it('a zip from yazl, under every zip content type and the generic one', async () => {
    assert.equal(goodZip.readUInt32LE(0), 0x04034b50);
    for (const type of [
      'application/zip',
      'application/x-zip-compressed',
      'application/octet-stream',
      undefined,
    ]) {
      const result = await inspectBundle(goodZip, type);
      assert.deepEqual(
        result,
        // The symlink's 3-byte target is not counted as file bytes.
        { ok: true, format: 'zip', entries: 6, uncompressedBytes: FILE_BYTES, sha256: sha256(goodZip) },
        String(type),
      );
    }
  });

  it('links that stay inside the root, including a pnpm-style chain, and a hard link', async () => {
    const result = await inspectBundle(
      tarGz([
        { name: './', type: '5' },
        { name: './src/', type: '5' },
        { name: './src/index.js', content: 'x' },
        { name: 'lib', type: '2', linkname: 'src' },
        { name: 'src/alias.js', type: '2', linkname: './index.js' },
        { name: 'bin/tool', type: '2', linkname: '../src/index.js' },
        { name: 'src/copy.js', type: '1', linkname: 'src/index.js' },
        { name: 'node_modules/.pnpm/foo/node_modules/foo/cli.js', content: 'cli' },
        { name: 'node_modules/foo', type: '2', linkname: '.pnpm/foo/node_modules/foo' },
        { name: 'node_modules/.bin/foo', type: '2', linkname: '../foo/cli.js' },
        { name: 'self', type: '2', linkname: '.' },
      ]),
      'application/gzip',
    );
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.equal(result.ok && result.entries, 11);
    assert.equal(result.ok && result.uncompressedBytes, 4);
  });
});

describe('inspectBundle: size and type', () => {
  it('refuses an archive over the limit with DOCUMENT_TOO_LARGE, naming the limit', async () => {
    const big = Buffer.alloc(BUNDLE_LIMITS.maxArchiveBytes + 1);
    big[0] = 0x1f;
    big[1] = 0x8b;
    refused(await inspectBundle(big, 'application/gzip'), 'DOCUMENT_TOO_LARGE', 'the limit is 4669440 bytes');
    // The limit is inclusive.
    assert.equal(
      (await inspectBundle(goodTarGz, 'application/gzip', { maxArchiveBytes: goodTarGz.length })).ok,
      true,
    );
    refused(
      await inspectBundle(goodTarGz, 'application/gzip', { maxArchiveBytes: goodTarGz.length - 1 }),
      'DOCUMENT_TOO_LARGE',
      `${goodTarGz.length - 1} bytes`,
    );
  });

  it('refuses an empty body with INVALID_INPUT', async () => {
    refused(await inspectBundle(Buffer.alloc(0), 'application/zip'), 'INVALID_INPUT', 'empty');
  });

  it('refuses other content types with UNSUPPORTED_TYPE, naming the accepted ones', async () => {
    for (const type of ['text/plain', 'application/x-tar', 'application/json', 'multipart/form-data']) {
      refused(
        await inspectBundle(goodTarGz, type),
        'UNSUPPORTED_TYPE',
        'application/gzip',
        'application/zip',
        'application/octet-stream',
      );
    }
  });

  it('refuses bytes that are neither gzip nor zip with UNSUPPORTED_TYPE', async () => {
    const random = Buffer.from('4c6f72656d20697073756d20646f6c6f722073697420616d6574', 'hex');
    refused(await inspectBundle(random, 'application/octet-stream'), 'UNSUPPORTED_TYPE', 'application/gzip');
    refused(await inspectBundle(random, 'application/gzip'), 'UNSUPPORTED_TYPE');
    // An uncompressed tar is not accepted either.
    refused(await inspectBundle(rawTar([{ name: 'a.js', content: 'x' }]), undefined), 'UNSUPPORTED_TYPE');
    refused(await inspectBundle(Buffer.from([0x1f]), undefined), 'UNSUPPORTED_TYPE');
  });

  it('refuses a declared type that contradicts the bytes with UNSUPPORTED_TYPE (no guessing)', async () => {
    refused(
      await inspectBundle(goodTarGz, 'application/zip'),
      'UNSUPPORTED_TYPE',
      'application/zip',
      'tar.gz',
    );
    refused(await inspectBundle(goodZip, 'application/gzip'), 'UNSUPPORTED_TYPE', 'application/gzip', 'zip');
  });
});

describe('inspectBundle: archive bombs', () => {
  const many = (n: number): TarSpec[] =>
    Array.from({ length: n }, (_, i) => ({ name: `f${i}.js`, content: 'x' }));

  it('refuses more entries than the limit (tar and zip)', async () => {
    assert.equal((await inspectBundle(tarGz(many(5)), undefined, { maxEntries: 5 })).ok, true);
    refused(
      await inspectBundle(tarGz(many(6)), undefined, { maxEntries: 5 }),
      'UNPROCESSABLE',
      'more than 5 entries',
    );
    const zip = await zipOf(many(6).map((s) => ({ name: s.name, content: 'x' })));
    refused(await inspectBundle(zip, undefined, { maxEntries: 5 }), 'UNPROCESSABLE', 'more than 5 entries');
  });

  it('refuses more uncompressed bytes than the limit (tar and zip)', async () => {
    const content = 'a'.repeat(600);
    const two: TarSpec[] = [
      { name: 'a', content },
      { name: 'b', content },
    ];
    assert.equal((await inspectBundle(tarGz(two), undefined, { maxUncompressedBytes: 1200 })).ok, true);
    refused(
      await inspectBundle(tarGz(two), undefined, { maxUncompressedBytes: 1000 }),
      'UNPROCESSABLE',
      'more than 1000 bytes',
      '"b"',
    );
    const zip = await zipOf(two.map((s) => ({ name: s.name, content })));
    refused(
      await inspectBundle(zip, undefined, { maxUncompressedBytes: 1000 }),
      'UNPROCESSABLE',
      'more than 1000 bytes',
    );
  });

  it('refuses a header that declares a huge file before reading its data', async () => {
    const header = gzipSync(tarHeader({ name: 'huge.bin' }, 7 * 1024 * 1024 * 1024));
    refused(await inspectBundle(header, undefined), 'UNPROCESSABLE', 'more than 200 MB');
  });

  it('stops inflating a gzip stream that runs on past the tar archive', async () => {
    const padded = gzipSync(
      Buffer.concat([rawTar([{ name: 'a.js', content: 'x' }]), Buffer.alloc(400 * 1024)]),
    );
    assert.ok(padded.length < 2048);
    refused(
      await inspectBundle(padded, undefined, { maxEntries: 5, maxUncompressedBytes: 1000 }),
      'UNPROCESSABLE',
      'decompresses to more than',
    );
  });

  it('defaults: the largest binary body AWS carries on the wire, 10,000 entries, 200 MB uncompressed', async () => {
    assert.deepEqual(
      { ...BUNDLE_LIMITS },
      { maxArchiveBytes: 4_669_440, maxEntries: 10_000, maxUncompressedBytes: 200 * 1024 * 1024 },
    );
    const dirs = (n: number): TarSpec[] => [
      { name: 'f.js', content: 'x' },
      ...Array.from({ length: n - 1 }, (_, i) => ({ name: `d${i}/`, type: '5' })),
    ];
    const atLimit = await inspectBundle(tarGz(dirs(10_000)), undefined);
    assert.equal(atLimit.ok && atLimit.entries, 10_000);
    refused(await inspectBundle(tarGz(dirs(10_001)), undefined), 'UNPROCESSABLE', 'more than 10000 entries');
    const overSize = tarGz([{ name: 'big.bin', size: 200 * 1024 * 1024 + 1 }]);
    refused(await inspectBundle(overSize, undefined), 'UNPROCESSABLE', 'more than 200 MB');
  });
});

describe('inspectBundle: corrupt archives', () => {
  it('reports corrupt input as UNPROCESSABLE, never by throwing', async () => {
    const truncated = goodTarGz.subarray(0, goodTarGz.length - 20);
    const badChecksum = rawTar([{ name: 'a.js', content: 'x' }]);
    badChecksum[0] = 'b'.charCodeAt(0);
    const cases: [string, Buffer, string][] = [
      [
        'gzip magic then garbage',
        Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4]),
        'gzip',
      ],
      ['a truncated tar.gz', truncated, 'corrupt'],
      ['gzip of text, not tar', gzipSync('just some text, not a tar archive at all'), 'tar'],
      ['a tar header with a bad checksum', gzipSync(badChecksum), 'tar'],
      ['a gzip inside the gzip', gzipSync(goodTarGz), 'another gzip'],
      [
        'a zip with garbage after its magic',
        Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(64, 7)]),
        'zip',
      ],
      ['a truncated zip', goodZip.subarray(0, goodZip.length - 30), 'zip'],
    ];
    for (const [label, data, fragment] of cases) {
      const result = await inspectBundle(data, undefined);
      refused(result, 'UNPROCESSABLE', fragment);
      assert.ok(!result.ok && result.message.length < 400, label);
    }
  });
});
