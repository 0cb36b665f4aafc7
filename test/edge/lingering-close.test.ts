/**
 * The lingering close's drain is shared out: every refused upload that never finishes is a stream
 * of buffers the garbage collector frees late, so a flood of them drained whole would cost the
 * platform over 100 MB. The full drain (DRAIN_BYTES) goes to FULL_DRAINS_AT_ONCE connections at a
 * time; a refusal past them reads at most SHORT_DRAIN_BYTES more. Measured on the server's own
 * sockets (bytes read after the answer), from the side of a client that uploads and never stops.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  DRAIN_BYTES,
  FULL_DRAINS_AT_ONCE,
  LingeringClose,
  SHORT_DRAIN_BYTES,
} from '../../functions/local-platform/lingering-close.ts';
import { waitFor } from '../helpers/wait-for.ts';

/** What the server has read of a refused connection since its answer, by the order of refusal. */
interface Refusal {
  readAtAnswer: number;
  socket: Socket;
}

describe('the lingering close shares its full drain among refused uploads', () => {
  let server: Server;
  let port: number;
  const lingering = new LingeringClose(5_000);
  const refusals: Refusal[] = [];
  const clients: Socket[] = [];

  before(async () => {
    server = createServer((req, res) => {
      // As the local server refuses a request without a valid key: before reading its body.
      res.setHeader('Connection', 'close');
      lingering.closeAfterAnswer(req, res);
      refusals.push({ readAtAnswer: req.socket.bytesRead, socket: req.socket });
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"code":"UNAUTHORIZED"}}');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as { port: number }).port;
  });
  after(async () => {
    for (const c of clients) c.destroy();
    lingering.closeAll();
    server.close();
    await once(server, 'close');
  });

  /** A client declaring 99 MB and writing as fast as the connection takes it, never finishing. */
  async function uploadForever(): Promise<Socket> {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    clients.push(socket);
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    await once(socket, 'connect');
    socket.write('POST /run HTTP/1.1\r\nHost: t\r\nContent-Length: 103809024\r\n\r\n');
    const block = Buffer.alloc(256 * 1024, 0x20);
    const pump = () => {
      while (!socket.destroyed && socket.write(block));
    };
    socket.on('drain', pump);
    pump();
    return socket;
  }
  const drained = (r: Refusal) => r.socket.bytesRead - r.readAtAnswer;
  /** The server reads no more of this connection: what it has drained stays put for 200 ms. */
  const settled = async (r: Refusal) => {
    await waitFor('the drain to stop', async () => {
      const before = drained(r);
      await new Promise((resolve) => setTimeout(resolve, 200));
      return drained(r) === before || undefined;
    });
    return drained(r);
  };

  it(`drains ${FULL_DRAINS_AT_ONCE} at once up to the full bound, the next only up to the short one`, async () => {
    for (let i = 0; i <= FULL_DRAINS_AT_ONCE; i++) await uploadForever();
    await waitFor('every upload refused', () => refusals.length === FULL_DRAINS_AT_ONCE + 1 || undefined);
    for (const r of refusals.slice(0, FULL_DRAINS_AT_ONCE)) {
      const bytes = await settled(r);
      assert.ok(bytes > DRAIN_BYTES, `a full drain read ${bytes} bytes`);
      // One read (64 KiB) past the bound at most.
      assert.ok(bytes <= DRAIN_BYTES + 64 * 1024, `a full drain read ${bytes} bytes`);
    }
    const short = refusals[FULL_DRAINS_AT_ONCE] as Refusal;
    const bytes = await settled(short);
    assert.ok(bytes <= SHORT_DRAIN_BYTES + 64 * 1024, `the refusal past them read ${bytes} bytes`);
  });

  it('gives the full drain again once a connection that held it closes', async () => {
    (refusals[0] as Refusal).socket.destroy();
    await waitFor('the first connection to close', () => (refusals[0] as Refusal).socket.closed || undefined);
    await uploadForever();
    await waitFor('the new upload refused', () => refusals.length === FULL_DRAINS_AT_ONCE + 2 || undefined);
    const bytes = await settled(refusals.at(-1) as Refusal);
    assert.ok(bytes > DRAIN_BYTES, `the new refusal read ${bytes} bytes`);
  });
});
