/**
 * Run as a separate process (possibly as another user, see test/adapters/service-network.test.ts): opens an
 * egress session in the runs directory given, with the host loopback ports given, tries to connect
 * to each port of a second list from inside, and prints the outcome as one line of JSON.
 *
 *   node test/helpers/egress-session.ts <runsDir> <listedPorts,...> <triedPorts,...>
 */
import { BwrapSandbox } from '../../functions/adapters/local/bwrap/sandboxes.ts';
import { DEFAULT_SANDBOX_LIMITS } from '../../functions/ports/sandbox.ts';

const [runsDir, listed = '', tried = ''] = process.argv.slice(2);
const ports = (csv: string) => csv.split(',').filter(Boolean).map(Number);
const session = await new BwrapSandbox({ runsDir: runsDir! }).openSession({
  runId: `egress-${process.pid}`,
  workspaceId: 'ws',
  env: {},
  network: 'egress',
  hostLoopbackPorts: ports(listed),
  limits: DEFAULT_SANDBOX_LIMITS,
  deadlineMs: Date.now() + 60_000,
});
try {
  const script = `const net=require('net');Promise.all(${JSON.stringify(ports(tried))}.map(p=>new Promise(r=>{const s=net.connect(p,'127.0.0.1');s.on('connect',()=>{s.destroy();r([p,'open'])});s.on('error',e=>r([p,e.code]))}))).then(v=>console.log(JSON.stringify({uid:process.getuid(),ports:Object.fromEntries(v)})))`;
  const result = await session.exec(`node -e "${script}"`);
  process.stdout.write(`${JSON.stringify({ platformUid: process.getuid?.(), ...result })}\n`);
} finally {
  await session.close();
}
