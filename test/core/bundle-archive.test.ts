/**
 * Code bundle validation and extraction (functions/shared/bundle-archive/), on real
 * archives built here: node-tar and yazl for well-formed ones; hand-written ustar headers (gzipped
 * with node:zlib) for the entries node-tar will not write; yazl output with its entry names
 * patched afterwards for the names yazl refuses to write.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { ZipFile as YazlZip } from 'yazl';
import { extractBundle } from '../../functions/shared/bundle-archive/extract.ts';
import { type BundleInspection, inspectBundle } from '../../functions/shared/bundle-archive/inspect.ts';
import { BundleExtractionError } from '../../functions/shared/bundle-archive/refusal.ts';
import { BUNDLE_LIMITS } from '../../functions/shared/bundle-limits.ts';
import { tarGzOf } from '../helpers/bundles.ts';

// ---------------------------------------------------------------------------------------------
// Archive builders

interface TarSpec {
  name: string;
  /** ustar typeflag: '0' file, '1' hard link, '2' symlink, '3' char dev, '4' block dev, '5' dir, '6' FIFO. */
  type?: string;
  content?: Buffer | string;
  linkname?: string;
  mode?: number;
  /** Declared size when it should differ from the content (a header-only bomb). */
  size?: number;
}

function field(header: Buffer, offset: number, length: number, value: string): void {
  const bytes = Buffer.from(value, 'utf8');
  assert.ok(bytes.length <= length, `tar field too long: ${value}`);
  bytes.copy(header, offset);
}

const octal = (n: number, width: number) => `${n.toString(8).padStart(width - 1, '0')}\0`;

/** One 512-byte ustar header, checksum included. */
function tarHeader(spec: TarSpec, size: number): Buffer {
  const h = Buffer.alloc(512);
  field(h, 0, 100, spec.name);
  field(h, 100, 8, octal(spec.mode ?? (spec.type === '5' ? 0o755 : 0o644), 8));
  field(h, 108, 8, octal(1000, 8));
  field(h, 116, 8, octal(1000, 8));
  field(h, 124, 12, octal(size, 12));
  field(h, 136, 12, octal(1_700_000_000, 12));
  field(h, 148, 8, '        ');
  field(h, 156, 1, spec.type ?? '0');
  field(h, 157, 100, spec.linkname ?? '');
  field(h, 257, 6, 'ustar\0');
  field(h, 263, 2, '00');
  field(h, 265, 32, 'user');
  field(h, 297, 32, 'user');
  let sum = 0;
  for (const byte of h) sum += byte;
  field(h, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return h;
}

function rawTar(specs: TarSpec[]): Buffer {
  const parts: Buffer[] = [];
  for (const spec of specs) {
    const content = Buffer.from(spec.content ?? '');
    parts.push(tarHeader(spec, spec.size ?? content.length));
    if (content.length > 0) {
      parts.push(content, Buffer.alloc((512 - (content.length % 512)) % 512));
    }
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

const tarGz = (specs: TarSpec[]) => gzipSync(rawTar(specs));

interface ZipSpec {
  name: string;
  content?: string;
  mode?: number;
  dir?: boolean;
}

/**
 * A zip from yazl. yazl refuses unsafe names, so `rename` maps a same-length safe placeholder to
 * the name wanted, patched into the local and central headers (the CRC covers data, not names).
 */
async function zipOf(specs: ZipSpec[], rename: Record<string, string> = {}): Promise<Buffer> {
  const zip = new YazlZip();
  for (const spec of specs) {
    if (spec.dir) zip.addEmptyDirectory(spec.name, spec.mode ? { mode: spec.mode } : {});
    else zip.addBuffer(Buffer.from(spec.content ?? ''), spec.name, spec.mode ? { mode: spec.mode } : {});
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  const out = Buffer.concat(chunks);
  for (const [placeholder, wanted] of Object.entries(rename)) {
    const from = Buffer.from(placeholder);
    const to = Buffer.from(wanted);
    assert.equal(from.length, to.length, 'placeholder and name must be the same length');
    let at = out.indexOf(from);
    let patched = 0;
    while (at !== -1) {
      to.copy(out, at);
      patched++;
      at = out.indexOf(from, at + to.length);
    }
    assert.equal(patched, 2, `${placeholder} should appear in the local and the central header`);
  }
  return out;
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

function refused(result: BundleInspection, code: string, ...fragments: (string | RegExp)[]): void {
  assert.equal(result.ok, false, `expected ${code}, got ${JSON.stringify(result)}`);
  if (result.ok) return;
  assert.equal(result.code, code, result.message);
  for (const fragment of fragments) {
    if (typeof fragment === 'string')
      assert.ok(result.message.includes(fragment), `"${fragment}" in: ${result.message}`);
    else assert.match(result.message, fragment);
  }
}

// ---------------------------------------------------------------------------------------------

let work: string;
/** node-tar's output for a small project: files, an executable, a link inside the root. */
let goodTarGz: Buffer;
let goodZip: Buffer;

const FILES: Record<string, string> = {
  'package.json': '{"name":"agent","version":"1.0.0"}\n',
  'src/index.js': 'console.log("hello");\n',
  'src/util.js': 'export const x = 1;\n',
  'bin/run.sh': '#!/bin/sh\nexec node src/index.js\n',
};
const FILE_BYTES = Object.values(FILES).reduce((n, s) => n + Buffer.byteLength(s), 0);

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'agenthost-bundle-'));
  goodTarGz = await tarGzOf(FILES, { lib: 'src' });

  goodZip = await zipOf([
    { name: 'package.json', content: FILES['package.json'] },
    { name: 'src/', dir: true },
    { name: 'src/index.js', content: FILES['src/index.js'] },
    { name: 'src/util.js', content: FILES['src/util.js'] },
    { name: 'bin/run.sh', content: FILES['bin/run.sh'], mode: 0o100755 },
    { name: 'lib', content: 'src', mode: 0o120777 },
  ]);
});

after(async () => {
  await rm(work, { recursive: true, force: true });
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
      // package.json, src/, src/index.js, src/util.js, bin/, bin/run.sh, lib
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

describe('inspectBundle: unsafe tar entries', () => {
  const cases: [string, TarSpec[], string][] = [
    ['an absolute path', [{ name: '/etc/x', content: 'x' }], '"/etc/x"'],
    [
      'a ".." segment',
      [
        { name: 'ok.js', content: 'x' },
        { name: '../evil', content: 'x' },
      ],
      '"../evil"',
    ],
    ['a ".." segment deeper down', [{ name: 'a/b/../../../evil', content: 'x' }], '"a/b/../../../evil"'],
    ['a Windows drive path', [{ name: 'C:/Windows/evil', content: 'x' }], '"C:/Windows/evil"'],
    ['a backslash path', [{ name: 'a\\..\\..\\evil', content: 'x' }], 'backslash'],
    [
      'a symlink escaping the root',
      [{ name: 'src/link', type: '2', linkname: '../../etc/passwd' }],
      '"src/link"',
    ],
    ['a symlink to an absolute path', [{ name: 'link', type: '2', linkname: '/etc/passwd' }], '"link"'],
    ['a symlink to the parent of the root', [{ name: 'up', type: '2', linkname: '..' }], '"up"'],
    [
      'a symlink escaping through another link',
      [
        { name: 'x/y', type: '2', linkname: '..' },
        { name: 'z', type: '2', linkname: 'x/y/..' },
        { name: 'f', content: 'x' },
      ],
      '"z"',
    ],
    [
      'a symlink loop',
      [
        { name: 'a', type: '2', linkname: 'b/x' },
        { name: 'b', type: '2', linkname: 'a/x' },
        { name: 'f', content: 'x' },
      ],
      'loop',
    ],
    ['a hard link escaping the root', [{ name: 'hard', type: '1', linkname: '../etc/passwd' }], '"hard"'],
    ['a hard link to an absolute path', [{ name: 'hard', type: '1', linkname: '/etc/passwd' }], '"hard"'],
    [
      'a hard link to no earlier file',
      [
        { name: 'hard', type: '1', linkname: 'later.js' },
        { name: 'later.js', content: 'x' },
      ],
      '"hard"',
    ],
    ['a character device', [{ name: 'dev/null', type: '3' }], '"dev/null"'],
    ['a block device', [{ name: 'disk', type: '4' }], '"disk"'],
    ['a FIFO', [{ name: 'pipe', type: '6' }], '"pipe"'],
    ['an unknown entry type', [{ name: 'sparse', type: 'S', content: 'x' }], '"sparse"'],
    [
      'a file below a symlink',
      [
        { name: 'lib', type: '2', linkname: 'src' },
        { name: 'lib/evil.js', content: 'x' },
      ],
      '"lib/evil.js"',
    ],
    [
      'a file below a file',
      [
        { name: 'a', content: 'x' },
        { name: 'a/b', content: 'y' },
      ],
      '"a/b"',
    ],
    [
      'the same file twice',
      [
        { name: 'a.js', content: 'x' },
        { name: './a.js', content: 'y' },
      ],
      '"./a.js"',
    ],
    ['a link naming the root', [{ name: '.', type: '2', linkname: 'src' }], '"."'],
  ];
  for (const [label, specs, named] of cases) {
    it(`refuses ${label} with UNPROCESSABLE, naming the entry`, async () => {
      refused(await inspectBundle(tarGz(specs), 'application/gzip'), 'UNPROCESSABLE', named);
    });
  }

  it('refuses a bundle with no files', async () => {
    refused(
      await inspectBundle(tarGz([{ name: 'empty/', type: '5' }]), undefined),
      'UNPROCESSABLE',
      'no files',
    );
    refused(await inspectBundle(await zipOf([]), 'application/zip'), 'UNPROCESSABLE', 'no files');
  });
});

describe('inspectBundle: unsafe zip entries', () => {
  it('refuses an entry named "../evil"', async () => {
    const zip = await zipOf(
      [
        { name: 'ok.js', content: 'x' },
        { name: 'QQ/evil', content: 'x' },
      ],
      { 'QQ/evil': '../evil' },
    );
    refused(await inspectBundle(zip, 'application/zip'), 'UNPROCESSABLE', '"../evil"');
  });

  it('refuses an absolute entry "/etc/x"', async () => {
    const zip = await zipOf([{ name: 'Qetc/x', content: 'x' }], { 'Qetc/x': '/etc/x' });
    refused(await inspectBundle(zip, 'application/zip'), 'UNPROCESSABLE', '"/etc/x"');
  });

  it('refuses backslash and drive-letter names', async () => {
    const backslash = await zipOf([{ name: 'aQQQQb', content: 'x' }], { aQQQQb: 'a\\..\\b' });
    refused(await inspectBundle(backslash, 'application/zip'), 'UNPROCESSABLE', 'backslash');
    const drive = await zipOf([{ name: 'QQ/evil', content: 'x' }], { 'QQ/evil': 'C:/evil' });
    refused(await inspectBundle(drive, 'application/zip'), 'UNPROCESSABLE', '"C:/evil"');
  });

  it('refuses symlinks (external attributes) that escape or are absolute', async () => {
    const escaping = await zipOf([
      { name: 'a.js', content: 'x' },
      { name: 'src/link', content: '../../etc/passwd', mode: 0o120777 },
    ]);
    refused(await inspectBundle(escaping, 'application/zip'), 'UNPROCESSABLE', '"src/link"', 'outside');
    const absolute = await zipOf([{ name: 'link', content: '/etc/passwd', mode: 0o120777 }]);
    refused(await inspectBundle(absolute, 'application/zip'), 'UNPROCESSABLE', '"link"', 'absolute');
  });

  it('refuses device and FIFO entries', async () => {
    for (const mode of [0o020644, 0o060644, 0o010644]) {
      const zip = await zipOf([{ name: 'dev', content: '', mode }]);
      refused(await inspectBundle(zip, 'application/zip'), 'UNPROCESSABLE', '"dev"');
    }
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

// ---------------------------------------------------------------------------------------------

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
