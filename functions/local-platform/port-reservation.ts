import { createServer, type Server } from 'node:net';

/**
 * `npm start`'s API port, bound first, before the start creates the owner account, prints its key
 * or touches the store: a port in use stops it there (EADDRINUSE, which the CLI answers with
 * CONFLICT and a command that starts on a free port), not after an account and a key that nobody
 * can use. The port stays bound until the HTTP server takes its listening socket over
 * (LocalServer.listen), so nothing can take it meanwhile.
 *
 * Until then the platform answers nothing (its housekeeping runs before the first request): a
 * connection that arrives is closed at once, as one refused before the port was bound would be.
 */
export async function reservePort(port: number, host: string): Promise<Server> {
  const reservation = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    reservation.once('error', reject);
    reservation.listen(port, host, () => {
      reservation.off('error', reject);
      resolve();
    });
  });
  return reservation;
}

/**
 * The first port after `port` that `host` can bind now (of the next `tries`), for the command a
 * refused start prints; 0 (any free port) when none is.
 */
export async function freePortAfter(port: number, host: string, tries = 20): Promise<number> {
  for (let candidate = port + 1; candidate <= Math.min(port + tries, 65_535); candidate++) {
    const free = await reservePort(candidate, host).then(
      (reservation) => new Promise<boolean>((resolve) => reservation.close(() => resolve(true))),
      () => false,
    );
    if (free) return candidate;
  }
  return 0;
}
