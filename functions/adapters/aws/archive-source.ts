/**
 * Archive helpers shared by the task-side scripts (the sandbox runner in ecs-sandbox.ts, the service
 * runner in ecs-service-runner.ts): `inside` (a path kept under the root), `untar` (tar.gz through the
 * image's tar) and `unzip` (ZIP, with zip64 and symlinks). CommonJS; needs fs, path, zlib and cp.
 */
export const ARCHIVE_SOURCE = String.raw`function inside(root, rel) {
  if (typeof rel !== 'string' || rel.includes('\0') || rel.includes('\\') || rel.startsWith('/')) throw new Error('refused path ' + JSON.stringify(rel));
  const parts = rel.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..')) throw new Error('refused path ' + JSON.stringify(rel));
  return path.join(root, ...parts);
}
function untar(data, root) {
  const r = cp.spawnSync('tar', ['-xzf', '-', '-C', root, '--no-same-owner'], { input: data, stdio: ['pipe', 'ignore', 'pipe'], maxBuffer: 1 << 20 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error('tar failed: ' + String(r.stderr).slice(-500));
}
function big(buf, at) { return Number(buf.readBigUInt64LE(at)); }
function unzip(buf, root) {
  let end = buf.length - 22;
  while (end >= 0 && buf.readUInt32LE(end) !== 0x06054b50) end--;
  if (end < 0) throw new Error('zip: no end of central directory');
  let count = buf.readUInt16LE(end + 10);
  let at = buf.readUInt32LE(end + 16);
  if (count === 0xffff || at === 0xffffffff) {
    const locator = end - 20;
    if (locator < 0 || buf.readUInt32LE(locator) !== 0x07064b50) throw new Error('zip: no zip64 locator');
    const z = big(buf, locator + 8);
    count = big(buf, z + 32);
    at = big(buf, z + 48);
  }
  const links = [];
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) throw new Error('zip: bad central directory');
    const unix = buf.readUInt8(at + 5) === 3;
    const method = buf.readUInt16LE(at + 10);
    let csize = buf.readUInt32LE(at + 20);
    let usize = buf.readUInt32LE(at + 24);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    const mode = unix ? buf.readUInt32LE(at + 38) >>> 16 : 0;
    let local = buf.readUInt32LE(at + 42);
    const name = buf.toString('utf8', at + 46, at + 46 + nameLen);
    for (let p = at + 46 + nameLen; p + 4 <= at + 46 + nameLen + extraLen; p += 4 + buf.readUInt16LE(p + 2)) {
      if (buf.readUInt16LE(p) !== 1) continue;
      let q = p + 4;
      if (usize === 0xffffffff) { usize = big(buf, q); q += 8; }
      if (csize === 0xffffffff) { csize = big(buf, q); q += 8; }
      if (local === 0xffffffff) local = big(buf, q);
    }
    at += 46 + nameLen + extraLen + commentLen;
    const target = inside(root, name);
    if (name.endsWith('/') || (mode & 0o170000) === 0o040000) { fs.mkdirSync(target, { recursive: true }); continue; }
    if (buf.readUInt32LE(local) !== 0x04034b50) throw new Error('zip: bad local header');
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(start, start + csize);
    const data = method === 0 ? raw : method === 8 ? zlib.inflateRawSync(raw) : null;
    if (!data) throw new Error('zip: compression method ' + method + ' is not supported');
    if (data.length !== usize) throw new Error('zip: size mismatch');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    if ((mode & 0o170000) === 0o120000) links.push([data.toString('utf8'), target]);
    else fs.writeFileSync(target, data, { mode: (mode & 0o777) || 0o644 });
  }
  for (const [to, at2] of links) fs.symlinkSync(to, at2);
}
`;
