import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { DashboardAssets } from '../../functions/platform/dashboard-assets.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const SCRIPT = `export const greeting = ${JSON.stringify('hello '.repeat(200))};\n`;

/** A build as Vite leaves it: the page and a hashed script, with `forms` beside the script. */
function buildDir(forms: Record<string, Buffer> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'agenthost-dashboard-assets-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><script src="/assets/index-abcdefgh.js"></script>');
  writeFileSync(join(dir, 'assets', 'index-abcdefgh.js'), SCRIPT);
  for (const [name, body] of Object.entries(forms)) writeFileSync(join(dir, 'assets', name), body);
  return dir;
}

const get = (assets: DashboardAssets, path: string, acceptEncoding?: string) =>
  assets.answer(
    new Request(`http://localhost${path}`, {
      headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {},
    }),
    path,
  );

describe('the dashboard’s files as the local server holds them', () => {
  it('serves the build’s compressed forms as they are, and not as files of their own', async () => {
    // Marked bytes, not a compression of the script: served as they are, they are the build's.
    const br = Buffer.from('the build’s brotli form');
    const gz = Buffer.from('the build’s gzip form');
    const assets = DashboardAssets.load(buildDir({ 'index-abcdefgh.js.br': br, 'index-abcdefgh.js.gz': gz }));
    assert.ok(assets);
    const brotli = get(assets, '/assets/index-abcdefgh.js', 'gzip, deflate, br');
    assert.equal(brotli?.headers.get('content-encoding'), 'br');
    assert.deepEqual(Buffer.from(await (brotli as Response).arrayBuffer()), br);
    const gzip = get(assets, '/assets/index-abcdefgh.js', 'gzip');
    assert.equal(gzip?.headers.get('content-encoding'), 'gzip');
    assert.deepEqual(Buffer.from(await (gzip as Response).arrayBuffer()), gz);
    const plain = get(assets, '/assets/index-abcdefgh.js');
    assert.equal(plain?.headers.get('content-encoding'), null);
    assert.equal(await plain?.text(), SCRIPT);
    assert.equal(
      get(assets, '/assets/index-abcdefgh.js.br', 'br'),
      undefined,
      'the API answers it: not found',
    );
    assert.equal(get(assets, '/assets/index-abcdefgh.js.gz'), undefined);
  });

  it('compresses a file the build left no form of, once, and ignores a form older than its file', async () => {
    const dir = buildDir({ 'index-abcdefgh.js.br': Buffer.from('an older build’s form') });
    const past = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'assets', 'index-abcdefgh.js.br'), past, past);
    const assets = DashboardAssets.load(dir);
    assert.ok(assets);
    const first = Buffer.from(
      await (get(assets, '/assets/index-abcdefgh.js', 'br') as Response).arrayBuffer(),
    );
    assert.equal(brotliDecompressSync(first).toString(), SCRIPT);
    const again = Buffer.from(
      await (get(assets, '/assets/index-abcdefgh.js', 'br') as Response).arrayBuffer(),
    );
    assert.deepEqual(again, first);
    const gzip = get(assets, '/assets/index-abcdefgh.js', 'gzip');
    assert.equal(gunzipSync(Buffer.from(await (gzip as Response).arrayBuffer())).toString(), SCRIPT);
  });
});
