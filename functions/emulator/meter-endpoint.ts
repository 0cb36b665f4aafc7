import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DeploymentMeter, MeterSnapshot } from './deployment-meter.ts';

/**
 * The deployment meter on loopback, for a process other than the emulator's (the cost bench):
 * `GET /` answers a snapshot, `POST /reset` starts a new window. It holds counts only, nothing a tenant sent.
 */
export class MeterEndpoint {
  private server: Server | undefined;
  private readonly meter: DeploymentMeter;

  constructor(meter: DeploymentMeter) {
    this.meter = meter;
  }

  async listen(): Promise<string> {
    const server = createServer((req, res) => {
      req.resume();
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method === 'POST' && req.url === '/reset') {
        this.meter.reset();
        return answer(200, { reset: true });
      }
      if (req.method === 'GET' && req.url === '/') {
        this.meter.snapshot().then(
          (snapshot) => answer(200, snapshot),
          (err: unknown) => answer(500, { message: `meter: ${String(err)}` }),
        );
        return;
      }
      answer(404, { message: 'GET / or POST /reset' });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

/** The snapshot of the meter a running emulated deployment serves at `endpoint`. */
export async function readMeter(endpoint: string): Promise<MeterSnapshot> {
  const res = await fetch(`${endpoint}/`);
  if (!res.ok) throw new Error(`meter: ${res.status}`);
  return (await res.json()) as MeterSnapshot;
}

export async function resetMeter(endpoint: string): Promise<void> {
  const res = await fetch(`${endpoint}/reset`, { method: 'POST' });
  if (!res.ok) throw new Error(`meter reset: ${res.status}`);
}
