/**
 * `npm test` runs this first (package.json `pretest`). The sandbox tests run user code under
 * bubblewrap, and give sandboxes with outbound network their own network through pasta (Debian's
 * passt package), which opens /dev/net/tun; the DynamoDB tests run DynamoDB Local, which needs
 * a Java 17 or newer JDK; the dashboard tests drive Debian's Chromium headless shell. So the README's promise that
 * `npm test` passes on a fresh machine needs those tools and a usable tun device: when something is
 * missing and we may fix it (root, apt-get), fix it, saying so; otherwise explain what to do.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs';

const TOOL_DIRS = ['/usr/bin', '/bin', '/usr/local/bin', '/usr/sbin', '/sbin'];
/** Each tool the tests need, with the Debian package that has it. */
const TOOLS = [
  { tool: 'bwrap', pkg: 'bubblewrap', why: 'the sandbox for user code' },
  { tool: 'pasta', pkg: 'passt', why: 'the own network of services and orchestrators' },
  { tool: 'java', pkg: 'default-jdk-headless', why: 'DynamoDB Local, for the DynamoDB tests' },
  // DynamoDB Local is started through a launcher, compiled once, that binds it to loopback (dynamodb-local-launcher.ts).
  { tool: 'javac', pkg: 'default-jdk-headless', why: 'the loopback launcher of DynamoDB Local' },
  {
    tool: 'chromium-headless-shell',
    pkg: 'chromium-headless-shell',
    why: 'the browser the dashboard tests drive',
  },
];

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const hasApt = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
const say = (line: string) => process.stdout.write(`pretest: ${line}\n`);
const fail = (line: string) => {
  process.stderr.write(`pretest: ${line}\n`);
  process.exit(1);
};

const missing = TOOLS.filter(({ tool }) => !TOOL_DIRS.some((d) => existsSync(`${d}/${tool}`)));
if (missing.length > 0) {
  const list = missing.map((m) => `${m.pkg} (${m.tool}, ${m.why})`).join(', ');
  if (!isRoot || !hasApt) {
    fail(
      `the tests need ${list}, which is not installed.\n` +
        `Install it (Debian/Ubuntu: sudo apt-get install ${missing.map((m) => m.pkg).join(' ')}) and run npm test again.`,
    );
  }
  say(`missing ${list}; installing with apt-get…`);
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
    execFileSync('apt-get', ['install', '-y', '-qq', ...missing.map((m) => m.pkg)], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (err) {
    fail(`installing ${missing.map((m) => m.pkg).join(' ')} failed: ${(err as Error).message}`);
  }
  say('installed.');
}

// DynamoDB Local's current releases need Java 17 or newer.
const javaVersion = spawnSync('java', ['-version'], { encoding: 'utf8' });
const javaMajor = Number(/version "(\d+)/.exec(`${javaVersion.stderr}${javaVersion.stdout}`)?.[1] ?? 0);
if (javaMajor < 17) {
  fail(
    `DynamoDB Local needs Java 17 or newer; found ${javaMajor ? `Java ${javaMajor}` : 'no working java'}.\n` +
      'Install it (Debian/Ubuntu: sudo apt-get install default-jdk-headless) and run npm test again.',
  );
}

// pasta opens /dev/net/tun as the platform's user. Distributions make it 0666 (creating an
// interface still needs CAP_NET_ADMIN in a namespace of one's own); some containers ship it
// missing or root-only, which breaks a platform that runs unprivileged (one test runs so).
const TUN = '/dev/net/tun';
if (!existsSync(TUN) || (statSync(TUN).mode & 0o666) !== 0o666) {
  if (!isRoot) {
    if (!existsSync(TUN))
      fail(`${TUN} is missing; pasta needs it (as root: mknod ${TUN} c 10 200; chmod 0666 ${TUN}).`);
    fail(`${TUN} is not usable by every user; pasta needs it (as root: chmod 0666 ${TUN}, the usual mode).`);
  }
  try {
    if (!existsSync(TUN)) {
      mkdirSync('/dev/net', { recursive: true });
      execFileSync('mknod', [TUN, 'c', '10', '200']);
    }
    chmodSync(TUN, 0o666);
    say(`${TUN} set to mode 0666 (the usual mode) so that pasta can open it as any user.`);
  } catch (err) {
    fail(`could not make ${TUN} usable: ${(err as Error).message}`);
  }
}
