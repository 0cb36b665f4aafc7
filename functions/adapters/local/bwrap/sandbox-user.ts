/**
 * Who user code is inside the bubblewrap sandbox: uid and gid 1000, named in a synthetic passwd
 * and group (no host user names), and, when the platform runs as root, the id maps that make
 * inside 1000 an unprivileged host id.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SANDBOX_WORK_DIR } from '../../../shared/sandbox-conventions.ts';

/** The uid and gid user code has inside the sandbox. */
export const INSIDE_ID = 1000;

/**
 * The identity files every sandbox sees, the same for every run: written once into `dir` (a temporary
 * directory renamed into place, so a reader never sees half of them) unless they are there.
 */
export async function ensureIdentityFiles(dir: string): Promise<void> {
  if (existsSync(join(dir, 'nsswitch.conf'))) return;
  const temp = `${dir}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  try {
    await writeIdentityFiles(temp);
    await rename(temp, dir);
  } catch (err) {
    await rm(temp, { recursive: true, force: true });
    // Another sandbox over the same runs directory wrote them first.
    if (!existsSync(join(dir, 'nsswitch.conf'))) throw err;
  }
}

/** The identity files the sandbox sees: no host user names, no host name resolution data. */
async function writeIdentityFiles(etc: string): Promise<void> {
  await mkdir(etc, { mode: 0o755 });
  const files: Record<string, string> = {
    passwd: [
      'root:x:0:0:root:/root:/usr/sbin/nologin',
      `sandbox:x:${INSIDE_ID}:${INSIDE_ID}:sandbox:${SANDBOX_WORK_DIR}:/bin/sh`,
      'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin',
    ].join('\n'),
    group: ['root:x:0:', `sandbox:x:${INSIDE_ID}:`, 'nogroup:x:65534:'].join('\n'),
    hosts: ['127.0.0.1\tlocalhost', '127.0.1.1\tsandbox', '::1\tlocalhost ip6-localhost ip6-loopback'].join(
      '\n',
    ),
    'nsswitch.conf': [
      'passwd: files',
      'group: files',
      'shadow: files',
      'hosts: files dns',
      'networks: files',
      'protocols: files',
      'services: files',
    ].join('\n'),
  };
  for (const [name, content] of Object.entries(files)) {
    await writeFile(join(etc, name), `${content}\n`, { mode: 0o644, flag: 'wx' });
  }
}

/** As root: inside uid/gid 0 stays host 0 (bwrap's setup), inside 1000 is the unprivileged host id. */
export function writeIdMaps(pid: number, hostUid: number, hostGid: number): void {
  writeFileSync(`/proc/${pid}/uid_map`, `0 0 1\n${INSIDE_ID} ${hostUid} 1\n`);
  writeFileSync(`/proc/${pid}/gid_map`, `0 0 1\n${INSIDE_ID} ${hostGid} 1\n`);
}
