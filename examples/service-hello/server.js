// An always-on service: a plain Node HTTP app. The platform sets PORT (its gateway forwards the
// service's URL here) and answers GET /health itself once this port accepts connections.
const { createServer } = require('node:http');

const port = Number(process.env.PORT ?? 3000);
const startedAt = new Date().toISOString();
let served = 0;

const server = createServer((req, res) => {
  served += 1;
  const url = new URL(req.url ?? '/', 'http://service');
  const reply = (status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method === 'GET' && url.pathname === '/') {
    const name = url.searchParams.get('name') ?? 'world';
    return reply(200, { greeting: `Hello, ${name}!`, started_at: startedAt });
  }
  if (req.method === 'GET' && url.pathname === '/count') return reply(200, { served });
  return reply(404, { error: `no route for ${req.method} ${url.pathname}` });
});

server.listen(port, () => console.log(`hello-service listening on ${port}`));
// A service is stopped with SIGTERM: finish what is in flight, then exit.
process.on('SIGTERM', () => server.close(() => process.exit(0)));
