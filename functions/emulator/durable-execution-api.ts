import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DurableExecutions, OperationUpdate } from './durable-executions.ts';
import { AwsWireError, readLimitedBody, sendJson } from './emulator-http.ts';

/*
 * The two operations of Lambda's durable execution API that a durable function's SDK calls, on the
 * emulated Lambda service's endpoint (restJson1, as @aws-sdk/client-lambda sends them):
 * CheckpointDurableExecution (POST /2025-12-01/durable-executions/{arn}/checkpoint) and
 * GetDurableExecutionState (GET /2025-12-01/durable-executions/{arn}/state).
 */

const PATH = /^\/2025-12-01\/durable-executions\/([^/]+)\/(checkpoint|state)$/;
/** A checkpoint's request body at most (Lambda's checkpoint payloads are bounded well below it). */
const CHECKPOINT_BODY_LIMIT = 8 * 1024 * 1024;

/** Answers the request if it is one of those operations: true when it was. */
export async function handleDurableExecutionApi(
  executions: DurableExecutions,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<boolean> {
  const match = PATH.exec(url.pathname);
  if (!match) return false;
  let arn: string;
  try {
    arn = decodeURIComponent(match[1]!);
  } catch {
    throw new AwsWireError(
      'ValidationException',
      400,
      'The durable execution ARN is not valid URL encoding.',
    );
  }
  if (match[2] === 'state' && req.method === 'GET') {
    const token = url.searchParams.get('CheckpointToken') ?? '';
    const marker = url.searchParams.get('Marker') ?? undefined;
    const maxItems = Number(url.searchParams.get('MaxItems') ?? 1000);
    sendJson(res, 200, executions.state(arn, token, marker, maxItems));
    return true;
  }
  if (match[2] === 'checkpoint' && req.method === 'POST') {
    const raw = await readLimitedBody(
      req,
      CHECKPOINT_BODY_LIMIT,
      () => new AwsWireError('RequestTooLargeException', 413, 'The checkpoint is too large.'),
    );
    let body: { CheckpointToken?: string; Updates?: OperationUpdate[] };
    try {
      body = JSON.parse(raw.toString('utf8') || '{}');
    } catch {
      throw new AwsWireError('SerializationException', 400, 'The checkpoint is not JSON.');
    }
    sendJson(res, 200, executions.checkpoint(arn, body.CheckpointToken ?? '', body.Updates ?? []));
    return true;
  }
  throw new AwsWireError(
    'UnknownOperationException',
    404,
    'The operation is not supported by this emulator.',
  );
}
