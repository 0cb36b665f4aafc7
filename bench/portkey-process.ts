/**
 * Portkey's open-source AI gateway (@portkey-ai/gateway, a devDependency) as the gateway bench
 * (bench/calls.ts) runs it: its own start-server script, headless, on an ephemeral port bound to
 * 127.0.0.1 (the script listens on every interface and prints only the port it was asked for,
 * so `listen` is wrapped to add the loopback host and print "listening on <url>"). Requests
 * name the fake model with the x-portkey-custom-host header; nothing leaves the machine.
 */
import { Server } from 'node:net';

const listen = Server.prototype.listen;
Server.prototype.listen = function (this: Server, ...args: unknown[]) {
  if (typeof args[0] === 'number' && typeof args[1] !== 'string') args[1] = '127.0.0.1';
  this.once('listening', () => {
    const { port } = this.address() as { port: number };
    process.stdout.write(`\nlistening on http://127.0.0.1:${port}\n`);
  });
  return (listen as (...a: unknown[]) => Server).apply(this, args);
} as typeof Server.prototype.listen;
process.argv.push('--port=0', '--headless');
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
const entry = '@portkey-ai/gateway/build/start-server.js';
await import(entry);
