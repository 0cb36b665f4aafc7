import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback proxy that adds `Authorization: Bearer <key>` to every request and passes the rest on
 * as it came, the Host and Origin headers included: for clients that cannot be given a header
 * (the MCP conformance suite), so what they send still reaches the platform as they sent it.
 */
export async function startKeyAddingProxy(
  target: string,
  key: string,
): Promise<{ url: string; close: () => Promise<void> }> {
  const to = new URL(target);
  const server = createServer((req, res) => {
    const forwarded = request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${key}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
