import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedAlert {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
  /** The body as it came, before parsing: what a signature is checked against. */
  raw: string;
}

export interface AlertReceiver {
  url: string;
  received: ReceivedAlert[];
  /** POSTs answered with a status of 300 or more (answer()), not recorded in `received`. */
  refused(): number;
  /** Statuses to answer, first in first out; 200 when empty. */
  answer(...statuses: number[]): void;
  /** Resolves when `n` alerts have arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedAlert[]>;
  close(): Promise<void>;
}

/**
 * A loopback HTTP server standing in for a team's alert webhook or a run's completion webhook:
 * records every POST it answers 2xx (`refused` counts the others).
 */
export async function startAlertReceiver(): Promise<AlertReceiver> {
  const received: ReceivedAlert[] = [];
  const statuses: number[] = [];
  const waiters: (() => void)[] = [];
  let refused = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = statuses.shift() ?? 200;
      if (status < 300) {
        let body: Record<string, unknown> = {};
        const raw = Buffer.concat(chunks).toString('utf8');
        try {
          body = JSON.parse(raw);
        } catch {
          body = { unparsable: true };
        }
        received.push({ path: req.url ?? '/', headers: req.headers, body, raw });
        for (const w of waiters.splice(0)) w();
      } else refused++;
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/alerts`,
    received,
    refused: () => refused,
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
