import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback pass-through in front of an AWS JSON-protocol endpoint (DynamoDB Local) that hands
 * each exchange to the deployment's meter: the operation (X-Amz-Target's last part), the request's
 * and the answer's JSON. Bytes go through unchanged (DynamoDB's answers carry a CRC32 of their
 * body), so the functions' SDK clients see the engine itself; what the meter reads is what the
 * engine answered (DynamoDB's ConsumedCapacity).
 */
export type Exchange = (operation: string, request: unknown, status: number, answer: unknown) => void;

export class MeteringProxy {
  private readonly target: URL;
  private readonly observe: Exchange;
  private server: Server | undefined;

  constructor(target: string, observe: Exchange) {
    this.target = new URL(target);
    this.observe = observe;
  }

  async listen(): Promise<string> {
    const server = createServer((req, res) => {
      const body: Buffer[] = [];
      req.on('data', (c: Buffer) => body.push(c));
      req.on('end', () => {
        const sent = Buffer.concat(body);
        const upstream = request(
          {
            host: this.target.hostname,
            port: this.target.port,
            method: req.method,
            path: req.url,
            headers: req.headers,
          },
          (answer) => {
            const back: Buffer[] = [];
            answer.on('data', (c: Buffer) => back.push(c));
            answer.on('end', () => {
              const received = Buffer.concat(back);
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              res.end(received);
              const target = String(req.headers['x-amz-target'] ?? '');
              try {
                this.observe(
                  target.slice(target.lastIndexOf('.') + 1),
                  parseJson(sent),
                  answer.statusCode ?? 0,
                  parseJson(received),
                );
              } catch {
                // The meter never fails a request.
              }
            });
            answer.on('error', () => res.destroy());
          },
        );
        upstream.on('error', () => res.destroy());
        upstream.end(sent);
      });
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

function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}
