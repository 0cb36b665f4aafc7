/**
 * The code bundles tests build: `bundleOf` packs files as `agenthost publish` packs a directory
 * (what an author uploads); `tarGzOf` is node-tar's own tar.gz of a small project, with nested
 * paths, executables and symbolic links (what the sandboxes and the archive checks unpack);
 * `tarGz` (hand-written ustar headers) and `zipOf` (yazl, its names patched afterwards) build the
 * archives node-tar and yazl will not write, for the archive checks (test/core/bundle-*.test.ts).
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { c as tarCreate } from 'tar';
import { ZipFile as YazlZip } from 'yazl';
import { packDirectory } from '../../functions/cli/pack.ts';
import type { BundleInspection } from '../../functions/shared/bundle-archive/inspect.ts';

/** A tar.gz bundle of the given files, packed as the CLI packs a directory. */
export async function bundleOf(files: Record<string, string>): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'agenthost-bundle-'));
  try {
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    return (await packDirectory(dir)).data;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * node-tar's tar.gz (portable headers) of a project holding `files` (paths may be nested; a file
 * starting with `#!` is executable, 0755, the others 0644) and the symbolic links `links` (name →
 * target, which need not exist). The archive lists the top-level entries in the order the files
 * name them, then the links.
 */
export async function tarGzOf(
  files: Record<string, string>,
  links: Record<string, string> = {},
): Promise<Buffer> {
  const project = await mkdtemp(join(tmpdir(), 'agenthost-project-'));
  try {
    for (const [path, content] of Object.entries(files)) {
      await mkdir(dirname(join(project, path)), { recursive: true });
      await writeFile(join(project, path), content, { mode: content.startsWith('#!') ? 0o755 : 0o644 });
    }
    for (const [name, target] of Object.entries(links)) await symlink(target, join(project, name));
    const entries = [...new Set(Object.keys(files).map((p) => p.split('/')[0]!)), ...Object.keys(links)];
    return (await tarCreate({ gzip: true, cwd: project, portable: true }, entries).concat()) as Buffer;
  } finally {
    await rm(project, { recursive: true, force: true });
  }
}

/** A small project: files, one executable. */
export const SMALL_PROJECT: Record<string, string> = {
  'package.json': '{"name":"agent","version":"1.0.0"}\n',
  'src/index.js': 'console.log("hello");\n',
  'src/util.js': 'export const x = 1;\n',
  'bin/run.sh': '#!/bin/sh\nexec node src/index.js\n',
};

/**
 * SMALL_PROJECT with a link `lib` → `src` inside the root, as node-tar's tar.gz and as yazl's zip
 * (the executable 0755, the link a symlink entry).
 */
export async function smallProjectBundles(): Promise<{ tarGz: Buffer; zip: Buffer }> {
  const files = SMALL_PROJECT;
  return {
    tarGz: await tarGzOf(files, { lib: 'src' }),
    zip: await zipOf([
      { name: 'package.json', content: files['package.json'] },
      { name: 'src/', dir: true },
      { name: 'src/index.js', content: files['src/index.js'] },
      { name: 'src/util.js', content: files['src/util.js'] },
      { name: 'bin/run.sh', content: files['bin/run.sh'], mode: 0o100755 },
      { name: 'lib', content: 'src', mode: 0o120777 },
    ]),
  };
}

export interface TarSpec {
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
export function tarHeader(spec: TarSpec, size: number): Buffer {
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

/** An uncompressed tar of hand-written ustar headers: entries node-tar will not write. */
export function rawTar(specs: TarSpec[]): Buffer {
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

/** rawTar, gzipped with node:zlib. */
export const tarGz = (specs: TarSpec[]) => gzipSync(rawTar(specs));

export interface ZipSpec {
  name: string;
  content?: string;
  mode?: number;
  dir?: boolean;
}

/**
 * A zip from yazl. yazl refuses unsafe names, so `rename` maps a same-length safe placeholder to
 * the name wanted, patched into the local and central headers (the CRC covers data, not names).
 */
export async function zipOf(specs: ZipSpec[], rename: Record<string, string> = {}): Promise<Buffer> {
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

/** Asserts an inspection refused the bundle with `code`, its message holding every fragment. */
export function refused(result: BundleInspection, code: string, ...fragments: (string | RegExp)[]): void {
  assert.equal(result.ok, false, `expected ${code}, got ${JSON.stringify(result)}`);
  if (result.ok) return;
  assert.equal(result.code, code, result.message);
  for (const fragment of fragments) {
    if (typeof fragment === 'string')
      assert.ok(result.message.includes(fragment), `"${fragment}" in: ${result.message}`);
    else assert.match(result.message, fragment);
  }
}
