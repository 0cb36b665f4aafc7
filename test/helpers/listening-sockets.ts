import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * The TCP sockets a process tree listens on, from /proc (this machine's network namespace):
 * for tests that every server something opens is bound where it should be.
 */

export interface ListeningSocket {
  address: string;
  port: number;
  pid: number;
}

/** `root` and every process descended from it. */
export function processTree(root: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // The command name may hold spaces and parentheses: the fields after the last ')' are fixed.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
  }
  const tree: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    tree.push(pid);
    queue.push(...(parents.get(pid) ?? []));
  }
  return tree;
}

/** Every TCP socket in LISTEN state held by one of `pids`. */
export function listeningSocketsOf(pids: number[]): ListeningSocket[] {
  const owner = new Map<string, number>();
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) owner.set(m[1] as string, pid);
      } catch {
        // closed meanwhile
      }
    }
  }
  const sockets: ListeningSocket[] = [];
  for (const [file, decode] of [
    ['tcp', ipv4],
    ['tcp6', ipv6],
  ] as const) {
    for (const line of readFileSync(`/proc/net/${file}`, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '0A') continue;
      const pid = owner.get(f[9] as string);
      if (pid === undefined) continue;
      const [hex, port] = (f[1] as string).split(':') as [string, string];
      sockets.push({ address: decode(hex), port: Number.parseInt(port, 16), pid });
    }
  }
  return sockets;
}

/** 127.0.0.0/8, ::1, or an IPv4-mapped loopback address. */
export function isLoopback(address: string): boolean {
  return /^127\./.test(address) || address === '::1' || /^::ffff:127\./.test(address);
}

/** /proc/net/tcp's addresses: the 32-bit word in host (little-endian) order. */
function ipv4(hex: string): string {
  return [6, 4, 2, 0].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)).join('.');
}

/** /proc/net/tcp6's: four 32-bit words, each in host order. */
function ipv6(hex: string): string {
  const bytes: number[] = [];
  for (let w = 0; w < 4; w++) {
    const word = hex.slice(w * 8, w * 8 + 8);
    for (const i of [6, 4, 2, 0]) bytes.push(Number.parseInt(word.slice(i, i + 2), 16));
  }
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return `::ffff:${bytes.slice(12).join('.')}`;
  }
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2)
    groups.push((((bytes[i] as number) << 8) | (bytes[i + 1] as number)).toString(16));
  const text = groups.join(':');
  if (text === '0:0:0:0:0:0:0:1') return '::1';
  if (text === '0:0:0:0:0:0:0:0') return '::';
  return text;
}
