import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedAlert {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

export interface AlertReceiver {
  url: string;
  received: ReceivedAlert[];
  /** Statuses to answer, first in first out; 200 when empty. */
  answer(...statuses: number[]): void;
  /** Resolves when `n` alerts have arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedAlert[]>;
  close(): Promise<void>;
}

/** A loopback HTTP server standing in for a team's alert webhook: records every POST. */
export async function startAlertReceiver(): Promise<AlertReceiver> {
  const received: ReceivedAlert[] = [];
  const statuses: number[] = [];
  const waiters: (() => void)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = statuses.shift() ?? 200;
      if (status < 300) {
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          body = { unparsable: true };
        }
        received.push({ path: req.url ?? '/', headers: req.headers, body });
        for (const w of waiters.splice(0)) w();
      }
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/alerts`,
    received,
    answer: (...s) => statuses.push(...s),
    async waitFor(n, timeoutMs = 5000) {
      const until = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > until) throw new Error(`expected ${n} alerts, got ${received.length}`);
        await Promise.race([
          new Promise<void>((r) => waiters.push(r)),
          new Promise<void>((r) => setTimeout(r, 50)),
        ]);
      }
      return received.slice(0, n);
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close').catch(() => undefined);
    },
  };
}
