import type { IncomingMessage, ServerResponse } from 'node:http';
import { AwsWireError, EmulatorServer, parseJsonObject, readLimitedBody, sendJson } from './emulator-http.ts';

/**
 * The awsJson1_1 protocol the small control-plane stand-ins share (Application Auto Scaling,
 * CloudWatch Logs): POST / with X-Amz-Target `<prefix>.<Operation>` and a JSON object in, a JSON
 * object out, errors as {"__type", "message"} with status 400.
 */

export type JsonOperation = (body: Record<string, unknown>) => Promise<unknown> | unknown;

const MAX_REQUEST_BYTES = 1024 * 1024;
const CONTENT_TYPE = { 'content-type': 'application/x-amz-json-1.1' };

export class AwsJsonServer {
  private readonly server: EmulatorServer;

  constructor(targetPrefix: string, operations: Record<string, JsonOperation>) {
    this.server = new EmulatorServer(
      async (req: IncomingMessage, res: ServerResponse) => {
        const target = String(req.headers['x-amz-target'] ?? '');
        const name = target.startsWith(`${targetPrefix}.`) ? target.slice(targetPrefix.length + 1) : '';
        const op = Object.hasOwn(operations, name) ? operations[name] : undefined;
        if (req.method !== 'POST' || !op) {
          throw new AwsWireError(
            'UnknownOperationException',
            400,
            `The emulator does not serve ${target || 'this request'}`,
          );
        }
        const raw = await readLimitedBody(
          req,
          MAX_REQUEST_BYTES,
          () => new AwsWireError('ValidationException', 413, 'The request is too large.'),
        );
        sendJson(res, 200, await op(parseJsonObject(raw)), CONTENT_TYPE);
      },
      (res, e) => sendJson(res, e.status, { __type: e.code, message: e.message, ...e.fields }, CONTENT_TYPE),
    );
  }

  listen(port: number, host: string): Promise<string> {
    return this.server.listen(port, host);
  }

  close(): Promise<void> {
    return this.server.close();
  }
}
