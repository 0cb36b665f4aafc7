import { createServer, request } from 'node:http';
import { connect } from 'node:net';
import {
  APP_PORT,
  GATEWAY_PORT,
  GATEWAY_PORT_ENV,
  HTTP_ENV,
  PORT_CONFLICT_EXIT,
} from './service-protocol.ts';

/**
 * The gateway container of a service task (docs/services.md): listens on 8080, answers GET /health
 * itself (503 until the app accepts connections on PLATFORM_HTTP_PORT; an app without HTTP is ready
 * after a second), and proxies every other request to the app. If 8080 is taken it exits with
 * PORT_CONFLICT_EXIT. Node built-ins only: bundled (lib/container-programs.ts) it is small enough
 * to sit in the task definition as `node -e <program>`, so it starts itself when loaded.
 */

const env = process.env;
const appPort = Number(env.PLATFORM_HTTP_PORT || APP_PORT);
const port = Number(env[GATEWAY_PORT_ENV] || GATEWAY_PORT);
const http = env[HTTP_ENV] !== 'false';
const started = Date.now();
let ready = false;

const json = (body: unknown) => JSON.stringify(body);
const log = (msg: string, extra: Record<string, unknown> = {}) => console.log(json({ msg, ...extra }));

/** Until ready: an app with HTTP accepts a connection on its port; one without has run a second. */
function probe(): void {
  if (ready) return;
  if (!http) {
    if (Date.now() - started >= 1000) ready = true;
    else setTimeout(probe, 200);
    return;
  }
  const socket = connect({ host: '127.0.0.1', port: appPort });
  socket.once('connect', () => {
    socket.destroy();
    ready = true;
    log('app ready', { port: appPort });
  });
  socket.once('error', () => {
    socket.destroy();
    setTimeout(probe, 200);
  });
}

const server = createServer((req, res) => {
  if (req.method === 'GET' && (req.url ?? '').split('?')[0] === '/health') {
    res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' });
    res.end(json({ status: ready ? 'ok' : 'starting' }));
    return;
  }
  if (!ready || !http) {
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '2' });
    res.end(json({ error: { code: 'SERVICE_UNAVAILABLE', message: 'The service is not ready' } }));
    return;
  }
  const upstream = request(
    { host: '127.0.0.1', port: appPort, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode || 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
    res.end(json({ error: { code: 'BAD_GATEWAY', message: 'The service did not answer' } }));
  });
  // A client that goes away mid-request must not take the gateway with it.
  req.on('error', () => upstream.destroy());
  res.on('error', () => upstream.destroy());
  req.pipe(upstream);
});

server.on('error', (err: NodeJS.ErrnoException) => {
  const conflict = err.code === 'EADDRINUSE';
  console.error(
    json({
      msg: conflict
        ? `port ${GATEWAY_PORT} is taken: the app must listen on $PORT, not ${GATEWAY_PORT}`
        : 'gateway failed',
      error: String(err),
    }),
  );
  process.exit(conflict ? PORT_CONFLICT_EXIT : 1);
});
server.listen(port, '0.0.0.0', probe);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
