import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { HttpResponse } from '@smithy/core/transport';

/**
 * The refusals the DynamoDB service gives under contention and load, which DynamoDB Local never
 * does: a transaction that touches an item another transaction holds is cancelled with
 * `TransactionConflict` on that item; a single write to such an item fails with
 * TransactionConflictException; a table over its throughput throttles any request (on-demand:
 * ThrottlingException; provisioned: ProvisionedThroughputExceededException; in a transaction, the
 * cancellation reason `ThrottlingError`). Injected as HTTP responses in the service's wire format
 * (awsJson1_0, status 400, `__type`), at the bottom of the client's middleware stack, so the SDK
 * parses them and its own retry strategy retries what it retries on the real service. A refused
 * request never reaches DynamoDB Local: like the service's refusals, it wrote nothing.
 */
export interface FaultOptions {
  /** Share of TransactWriteItems requests cancelled with TransactionConflict on one of their items. */
  conflictShare?: number;
  /** Share of single writes (PutItem, UpdateItem, DeleteItem) refused with TransactionConflictException. */
  writeConflictShare?: number;
  /** Share of all requests throttled. */
  throttleShare?: number;
  /** Seed of the injector's random numbers, so a run's faults can be replayed. */
  seed?: number;
}

/** What the injector has refused so far, and its shares (a test may change them as it goes). */
export interface Faults {
  conflicts: number;
  writeConflicts: number;
  throttles: number;
  shares: Required<Omit<FaultOptions, 'seed'>>;
}

/** The default shares: high enough that every racing test meets each kind of refusal. */
export const DEFAULT_FAULTS: Required<FaultOptions> = {
  conflictShare: 0.25,
  writeConflictShare: 0.1,
  throttleShare: 0.05,
  seed: 20261124,
};

const DYNAMODB_ERROR_TYPE = 'com.amazonaws.dynamodb.v20120810#';

/** Adds the injector to `client`; the counts say how many refusals it has given so far. */
export function injectFaults(client: DynamoDBClient, options: FaultOptions = {}): Faults {
  const { seed, ...shares } = { ...DEFAULT_FAULTS, ...options };
  const random = mulberry32(seed);
  const counts: Faults = { conflicts: 0, writeConflicts: 0, throttles: 0, shares };
  client.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { headers: Record<string, string>; body?: unknown };
      const operation = (request.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
      if (random() < shares.throttleShare) {
        counts.throttles++;
        return { response: throttled(operation, request.body, random) };
      }
      if (operation === 'TransactWriteItems' && random() < shares.conflictShare) {
        counts.conflicts++;
        return { response: cancelled(request.body, 'TransactionConflict', random) };
      }
      if (
        ['PutItem', 'UpdateItem', 'DeleteItem'].includes(operation) &&
        random() < shares.writeConflictShare
      ) {
        counts.writeConflicts++;
        return { response: refused('TransactionConflictException', 'Transaction is ongoing for the item') };
      }
      return next(args);
    },
    // Below the deserializer (which parses what this returns) and the retry strategy.
    { step: 'deserialize', priority: 'low', name: 'faultInjector' },
  );
  return counts;
}

function throttled(operation: string, body: unknown, random: () => number): HttpResponse {
  if (operation === 'TransactWriteItems' && random() < 0.5) return cancelled(body, 'ThrottlingError', random);
  return random() < 0.5
    ? refused(
        'ThrottlingException',
        'Rate of requests exceeds the allowed throughput.',
        'com.amazon.coral.availability#',
      )
    : refused(
        'ProvisionedThroughputExceededException',
        'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
      );
}

/** A TransactionCanceledException whose reasons name `code` for one of the transaction's items. */
function cancelled(body: unknown, code: string, random: () => number): HttpResponse {
  // The SDK's body is a Uint8Array that warns when read as a string (JsonBytesStringAdapter).
  const text = body instanceof Uint8Array ? new TextDecoder().decode(body) : String(body);
  const items = (JSON.parse(text) as { TransactItems: unknown[] }).TransactItems.length;
  const hit = Math.floor(random() * items);
  const reasons = Array.from({ length: items }, (_, i) =>
    i === hit
      ? {
          Code: code,
          Message:
            code === 'TransactionConflict'
              ? 'Transaction is ongoing for the item'
              : 'Throughput exceeds the current capacity for one or more global secondary indexes. DynamoDB is automatically scaling your index so please try again shortly.',
        }
      : { Code: 'None' },
  );
  return response({
    __type: `${DYNAMODB_ERROR_TYPE}TransactionCanceledException`,
    Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
    CancellationReasons: reasons,
  });
}

function refused(type: string, message: string, namespace = DYNAMODB_ERROR_TYPE): HttpResponse {
  return response({ __type: `${namespace}${type}`, message });
}

let responses = 0;

function response(payload: object): HttpResponse {
  const body = Buffer.from(JSON.stringify(payload));
  return new HttpResponse({
    statusCode: 400,
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'content-length': String(body.length),
      'x-amzn-requestid': `FAULT${String(++responses).padStart(12, '0')}`,
    },
    body: new Uint8Array(body),
  });
}

/** A small seeded generator of numbers in [0, 1). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
