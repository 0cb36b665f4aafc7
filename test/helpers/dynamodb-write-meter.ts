import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback proxy in front of DynamoDB Local that meters the writes a deployment makes: every
 * write request (PutItem, UpdateItem, DeleteItem, TransactWriteItems, BatchWriteItem) is sent on
 * with `ReturnConsumedCapacity: INDEXES`, and the write units DynamoDB Local reports for it (the
 * table's and each index's, as the service bills them: a transaction's at twice a plain write's)
 * are kept with the request's body. DynamoDB Local checks no signature, so the body may change on
 * the way; what comes back is passed on as it is (the SDK reads the extra field and ignores it).
 */
export interface MeteredWrite {
  operation: string;
  /** When the proxy got it (epoch ms). */
  at: number;
  /** The request's body as the client sent it. */
  body: string;
  /** Write units in all, and per table or index name (`gsi2`, …; the table under `table`). */
  units: number;
  byPlace: Record<string, number>;
}

export interface DynamoDbWriteMeter {
  /** The proxy's endpoint: give it to the deployment as its DynamoDB endpoint. */
  endpoint: string;
  writes: MeteredWrite[];
  close(): Promise<void>;
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem']);

interface Consumed {
  CapacityUnits?: number;
  Table?: { CapacityUnits?: number };
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
}

export async function startDynamoDbWriteMeter(target: string): Promise<DynamoDbWriteMeter> {
  const upstream = new URL(target);
  const writes: MeteredWrite[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const sent = Buffer.concat(chunks);
      const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
      const metered = WRITES.has(operation);
      let body = sent;
      if (metered) {
        const parsed = JSON.parse(sent.toString('utf8')) as Record<string, unknown>;
        parsed.ReturnConsumedCapacity = 'INDEXES';
        body = Buffer.from(JSON.stringify(parsed));
      }
      const headers = { ...req.headers, host: upstream.host, 'content-length': String(body.length) };
      const out = httpRequest(
        { hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (c: Buffer) => parts.push(c));
          answer.on('end', () => {
            const got = Buffer.concat(parts);
            if (metered && answer.statusCode === 200)
              writes.push({ operation, at, body: sent.toString('utf8'), ...unitsOf(got) });
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(got);
          });
        },
      );
      out.on('error', () => res.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    writes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function unitsOf(answer: Buffer): { units: number; byPlace: Record<string, number> } {
  const parsed = JSON.parse(answer.toString('utf8')) as { ConsumedCapacity?: Consumed | Consumed[] };
  const list = parsed.ConsumedCapacity === undefined ? [] : [parsed.ConsumedCapacity].flat();
  const byPlace: Record<string, number> = {};
  let units = 0;
  for (const c of list) {
    units += c.CapacityUnits ?? 0;
    if (c.Table?.CapacityUnits) byPlace.table = (byPlace.table ?? 0) + c.Table.CapacityUnits;
    for (const [index, used] of Object.entries(c.GlobalSecondaryIndexes ?? {}))
      byPlace[index] = (byPlace[index] ?? 0) + (used.CapacityUnits ?? 0);
  }
  return { units, byPlace };
}
