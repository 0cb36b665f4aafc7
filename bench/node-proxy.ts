/**
 * The floor for one Node hop in the gateway bench (bench/calls.ts): a bare HTTP proxy that
 * forwards every request to UPSTREAM (a base URL; the request's path is appended) over a
 * keep-alive pool and pipes the answer back, with no parsing, auth or records. Listens on
 * 127.0.0.1 on an ephemeral port and prints "listening on <url>"; stops when stdin closes.
 */
import { Agent, createServer, request } from 'node:http';

const upstream = new URL(process.env.UPSTREAM ?? 'http://127.0.0.1:1');
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const server = createServer((req, res) => {
  const out = request(
    {
      agent,
      host: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path: upstream.pathname.replace(/\/$/, '') + (req.url ?? '/'),
      headers: { ...req.headers, host: upstream.host },
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  out.on('error', () => res.writeHead(502).end());
  req.pipe(out);
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`listening on http://127.0.0.1:${port}\n`);
});
process.stdin.resume();
process.stdin.on('end', () => server.close(() => process.exit(0)));
