/**
 * `npm test` runs this first (package.json `pretest`). The sandbox tests run user code under
 * bubblewrap, so the README's promise that `npm test` passes on a fresh machine needs bwrap: when
 * it is missing and we may install it (root, apt-get), install it, saying so; otherwise explain.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const found = ['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'].find((p) => existsSync(p));
if (found) process.exit(0);

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const hasApt = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
if (isRoot && hasApt) {
  process.stdout.write(
    'pretest: bubblewrap (bwrap) is missing; installing it with apt-get for the sandbox tests…\n',
  );
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
    execFileSync('apt-get', ['install', '-y', '-qq', 'bubblewrap'], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    process.stdout.write('pretest: bubblewrap installed.\n');
    process.exit(0);
  } catch (err) {
    process.stderr.write(`pretest: installing bubblewrap failed: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
process.stderr.write(
  'pretest: the sandbox tests need bubblewrap (bwrap), which is not installed.\n' +
    'Install it (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install bubblewrap) and run npm test again.\n',
);
process.exit(1);
