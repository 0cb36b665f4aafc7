import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the ECS sandbox's runner sees of S3, on loopback: every object at `<base>/<key>`, a PUT
 * stores its body, a GET of a missing object is 403 (as S3 answers a signer without
 * s3:ListBucket). The URLs stand for presigned ones; `objects` is what the bucket holds.
 */
export interface PresignedObjectStore {
  objects: Map<string, Buffer>;
  base: string;
  close(): void;
}

export async function startPresignedObjectStore(): Promise<PresignedObjectStore> {
  const objects = new Map<string, Buffer>();
  const server: Server = createServer((req, res) => {
    const key = decodeURIComponent((req.url ?? '/').slice(1));
    if (req.method === 'PUT') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        objects.set(key, Buffer.concat(chunks));
        res.end();
      });
      return;
    }
    const data = objects.get(key);
    res.statusCode = data ? 200 : 403;
    res.end(data ?? 'denied');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    objects,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => server.close(),
  };
}
