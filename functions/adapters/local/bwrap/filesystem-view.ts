/**
 * What of the host a bubblewrap sandbox sees: the system directories and a short list of /etc files
 * read-only, the synthetic identity files, the platform's node binary, a /dev, /proc, tmpfs /tmp
 * and /dev/shm, and the run's working directory read-write at /work; nothing else is bound.
 */
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { SANDBOX_WORK_DIR } from '../../../shared/sandbox-conventions.ts';
import { compareVersions } from './host-tools.ts';

/** Where the platform's node binary appears inside the sandbox. */
export const SANDBOX_NODE_DIR = '/opt/node/bin';

/** /dev/shm (RAM-backed) is capped at this, or at the disk limit when that is smaller. */
const SHM_BYTES = 64 * 1024 * 1024;

/** Host directories mirrored into the sandbox: symlinks (merged /usr) as symlinks, directories read-only. */
function systemDirArgs(): string[] {
  const args: string[] = ['--ro-bind', '/usr', '/usr'];
  for (const name of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) {
    const path = `/${name}`;
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(path), path);
    else if (stat.isDirectory()) args.push('--ro-bind', path, path);
  }
  return args;
}

/** /etc files every run gets (read-only, when present): the loader, alternatives, CA certificates. */
const ETC_ALWAYS = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/ssl/certs',
  '/etc/ssl/openssl.cnf',
  '/etc/ca-certificates',
  '/etc/ca-certificates.conf',
  '/etc/pki/ca-trust',
  '/etc/pki/tls/certs',
  '/etc/pki/tls/cert.pem',
  '/etc/pki/tls/openssl.cnf',
  '/etc/crypto-policies',
  '/etc/services',
  '/etc/protocols',
  '/etc/mime.types',
];
/** Only with network egress: name resolution. */
const ETC_EGRESS = ['/etc/resolv.conf', '/etc/gai.conf', '/etc/host.conf'];

/** /dev as bwrap's --dev makes it, without devpts (no pseudo-terminals; nothing here needs them). */
function devNodeArgs(): string[] {
  const args = ['--perms', '0755', '--tmpfs', '/dev'];
  for (const node of ['null', 'zero', 'full', 'random', 'urandom', 'tty'])
    args.push('--dev-bind', `/dev/${node}`, `/dev/${node}`);
  args.push('--symlink', '/proc/self/fd', '/dev/fd');
  for (const [i, name] of ['stdin', 'stdout', 'stderr'].entries())
    args.push('--symlink', `/proc/self/fd/${i}`, `/dev/${name}`);
  return args;
}

/**
 * bwrap's filesystem options for one exec, after the namespace and environment options of
 * bwrapArgs: a tmpfs root, remounted read-only once built.
 */
export function filesystemArgs(input: {
  version: string;
  asRoot: boolean;
  network: 'none' | 'egress';
  diskBytes: number;
  work: string;
  identityDir: string;
  nodePath: string;
}): string[] {
  const atLeast = (v: string) => compareVersions(input.version, v) >= 0;
  const args = systemDirArgs();
  const made = new Set<string>(['/']);
  const ensureParents = (dest: string) => {
    const parts = dest.split('/').filter(Boolean).slice(0, -1);
    let current = '';
    for (const part of parts) {
      current += `/${part}`;
      if (made.has(current)) continue;
      made.add(current);
      args.push('--perms', '0755', '--dir', current);
    }
  };
  for (const path of [...ETC_ALWAYS, ...(input.network === 'egress' ? ETC_EGRESS : [])]) {
    if (!existsSync(path)) continue;
    ensureParents(path);
    args.push('--ro-bind-try', path, path);
  }
  for (const name of ['passwd', 'group', 'hosts', 'nsswitch.conf']) {
    ensureParents(`/etc/${name}`);
    args.push('--ro-bind', join(input.identityDir, name), `/etc/${name}`);
  }
  ensureParents(`${SANDBOX_NODE_DIR}/node`);
  args.push('--ro-bind', input.nodePath, `${SANDBOX_NODE_DIR}/node`);

  const nested = !input.asRoot && input.network === 'egress';
  args.push('--proc', '/proc', ...(nested ? devNodeArgs() : ['--dev', '/dev']));
  const sized = (bytes: number) => (atLeast('0.7.0') ? ['--size', String(bytes)] : []);
  args.push('--perms', '1777', ...sized(Math.min(SHM_BYTES, input.diskBytes)), '--tmpfs', '/dev/shm');
  args.push('--remount-ro', '/dev');
  args.push('--perms', '1777', ...sized(input.diskBytes), '--tmpfs', '/tmp');
  args.push('--bind', input.work, SANDBOX_WORK_DIR);
  // As root, bwrap itself (uid 0 inside, without CAP_DAC_OVERRIDE) cannot enter the 0700 working
  // directory of uid 1000; the init script changes into it once it runs as 1000.
  if (!input.asRoot) args.push('--chdir', SANDBOX_WORK_DIR);
  args.push('--remount-ro', '/');
  return args;
}
