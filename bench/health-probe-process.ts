/**
 * A tenant's view of the platform's event loop, for bench/sandbox.ts: in its own process (so that
 * its clock does not stall with the platform's), sends `GET <url>/health` every `intervalMs` on a
 * fixed schedule, whether or not the earlier ones have answered (as independent tenants would), for
 * `durationMs`, and prints the latencies' p50, p99 and max in ms as JSON on stdout. Arguments: url,
 * durationMs, intervalMs. It waits for a line on stdin before it starts.
 */
import { once } from 'node:events';
import { Agent, request } from 'undici';

const [url, durationMs, intervalMs] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4])];
const dispatcher = new Agent({ connections: 32, keepAliveTimeout: 30_000 });
const probe = async (): Promise<number> => {
  const started = performance.now();
  const res = await request(`${url}/health`, { dispatcher });
  await res.body.dump();
  return performance.now() - started;
};
// Warm the connections, then wait for the go.
await Promise.all(Array.from({ length: 8 }, probe));
process.stdout.write('ready\n');
await once(process.stdin, 'data');
const pending: Promise<number>[] = [];
const started = performance.now();
for (let i = 1; performance.now() - started < durationMs; i++) {
  pending.push(probe());
  const next = started + i * intervalMs;
  await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
}
const times = (await Promise.all(pending)).sort((a, b) => a - b);
const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0;
process.stdout.write(`${JSON.stringify({ count: times.length, p50: at(0.5), p99: at(0.99), max: at(1) })}\n`);
await dispatcher.close();
