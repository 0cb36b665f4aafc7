/**
 * Probes of listening sockets on the host, for the local service host: whether a loopback port
 * accepts connections, a free port to give an app, and whether a process tree listens on a port
 * (the gateway's 8080, which an app must not take). listensInNamespace (pasta-network.ts) is the
 * same question asked inside a sandbox's own network.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { PublishPortTakenError } from '../../ports/sandbox.ts';

/** Whether something accepts TCP connections on 127.0.0.1:`port` (within half a second). */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const end = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => end(true));
    socket.once('error', () => end(false));
    socket.setTimeout(500, () => end(false));
  });
}

/** A port free on `host` now (0.0.0.0: on loopback). */
export async function freePort(host: string): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, host === '0.0.0.0' ? '127.0.0.1' : host, () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** How many ports an exec that publishes is tried on before its failure stands. */
const PUBLISH_TRIES = 5;

/**
 * Runs an exec published on a host port found free just before (`freePort`): between that check
 * and the sandbox's bind, another listener or a client connection's local port (the kernel hands
 * both out of the same range) may take it, and the exec is refused before anything runs
 * (PublishPortTakenError). Then another port is chosen and the exec tried again.
 */
export async function execPublished<T>(
  hostPort: number,
  choose: () => Promise<number>,
  exec: (hostPort: number) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await exec(hostPort);
    } catch (err) {
      if (!(err instanceof PublishPortTakenError) || attempt >= PUBLISH_TRIES) throw err;
      hostPort = await choose();
    }
  }
}

/** Whether a process in the tree under `rootPid` listens on `port` (Linux /proc; false elsewhere). */
export async function treeListensOn(rootPid: number, port: number): Promise<boolean> {
  try {
    const hex = port.toString(16).toUpperCase().padStart(4, '0');
    const inodes = new Set<string>();
    for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
      const text = await readFile(file, 'utf8').catch(() => '');
      for (const line of text.split('\n').slice(1)) {
        const f = line.trim().split(/\s+/);
        if (f.length > 9 && f[3] === '0A' && f[1]?.endsWith(`:${hex}`)) inodes.add(f[9] as string);
      }
    }
    if (inodes.size === 0) return false;
    const children = new Map<number, number[]>();
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!Number.isNaN(ppid)) children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    }
    const queue = [rootPid];
    for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
      queue.push(...(children.get(pid) ?? []));
      const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
      for (const fd of fds) {
        const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode && inodes.has(inode)) return true;
      }
    }
    return false;
  } catch {
    return false;
  }
}
