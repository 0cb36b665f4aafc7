import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../shared/logger.ts';
import { readBody } from './request-body.ts';

/*
 * The HTTP plumbing the AWS control-plane stand-ins share: a server whose handler may throw
 * without taking the process down, bounded request bodies, and JSON answers.
 */

/** What an emulator's request handler throws to answer with an AWS error. */
export class AwsWireError extends Error {
  readonly code: string;
  readonly status: number;
  readonly fields: Record<string, unknown>;

  constructor(code: string, status: number, message: string, fields: Record<string, unknown> = {}) {
    super(message);
    this.name = code;
    this.code = code;
    this.status = status;
    this.fields = fields;
  }
}

/** The body, or an AwsWireError (413) past `limit` bytes; reading stops at the first byte past it. */
export async function readLimitedBody(req: IncomingMessage, limit: number, tooLarge: () => AwsWireError) {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  const body = await readBody(req, limit);
  if (body === 'too-large') throw tooLarge();
  if (body === 'aborted') throw new AwsWireError('RequestAborted', 400, 'The request body was not received');
  return body;
}

/** A request body that must be a JSON object (empty means `{}`), or the SerializationException AWS answers. */
export function parseJsonObject(raw: Buffer): Record<string, unknown> {
  let body: unknown;
  try {
    body = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
  } catch {
    throw new AwsWireError('SerializationException', 400, 'The request body is not valid JSON.');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new AwsWireError('SerializationException', 400, 'The request body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    ...(text ? { 'content-type': 'application/json' } : {}),
    'content-length': String(Buffer.byteLength(text)),
    'x-amzn-requestid': crypto.randomUUID(),
    ...headers,
  });
  res.end(text);
}

/**
 * An HTTP server on `port`/`host` whose handler's failures become answers: an AwsWireError through
 * `onWireError` (each protocol shapes its own errors), anything else as a 500 in the same shape,
 * so bad input never crashes the emulator. Resolves with the base URL.
 */
export class EmulatorServer {
  private server: Server | undefined;
  private readonly handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  private readonly onWireError: (res: ServerResponse, err: AwsWireError) => void;
  private readonly logger: Logger | undefined;

  constructor(
    handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
    onWireError: (res: ServerResponse, err: AwsWireError) => void,
    logger?: Logger,
  ) {
    this.handle = handle;
    this.onWireError = onWireError;
    this.logger = logger;
  }

  listen(port: number, host: string): Promise<string> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        const wire =
          err instanceof AwsWireError
            ? err
            : new AwsWireError('InternalServiceError', 500, 'The emulator failed to handle the request');
        if (!(err instanceof AwsWireError)) {
          this.logger?.error('emulator request failed', { error: String((err as Error)?.stack ?? err) });
        }
        if (res.headersSent) {
          res.destroy();
          return;
        }
        // What is left of a refused body is not read: close the connection after the answer.
        res.setHeader('connection', 'close');
        this.onWireError(res, wire);
      });
    });
    // A client that misbehaves at the socket level costs its own connection only.
    server.on('clientError', (_err, socket) => socket.destroy());
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        const { address, port: bound } = server.address() as AddressInfo;
        const shown = address.includes(':') ? `[${address}]` : address;
        resolve(`http://${shown}:${bound}`);
      });
    });
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
