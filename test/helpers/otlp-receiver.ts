/**
 * An OTLP/HTTP trace receiver on loopback, as a collector's receiver takes spans: POST /v1/traces
 * with an ExportTraceServiceRequest, protobuf (application/x-protobuf) or JSON (application/json),
 * answered with an empty ExportTraceServiceResponse. The protobuf is read by a small wire-format
 * reader over the fields of opentelemetry/proto/trace/v1/trace.proto the tests look at.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, Value>;
  /** 2: error (opentelemetry.proto.trace.v1.Status.StatusCode). */
  statusCode: number;
  resource: Record<string, Value>;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the requests received. */
  contentTypes: string[];
  close(): Promise<void>;
}

/** `hang`: accept requests and never answer (a broken collector). */
export async function startOtlpReceiver(options: { hang?: boolean } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const held: ServerResponse[] = [];
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (options.hang) {
      held.push(res);
      return;
    }
    const type = String(req.headers['content-type'] ?? '');
    contentTypes.push(type);
    const body = Buffer.concat(chunks);
    if (req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    spans.push(...(type.includes('json') ? fromJson(JSON.parse(body.toString('utf8'))) : fromProtobuf(body)));
    res.writeHead(200, {
      'content-type': type.includes('json') ? 'application/json' : 'application/x-protobuf',
    });
    res.end(type.includes('json') ? '{}' : Buffer.alloc(0));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** An attribute's value: a scalar, or an array of them (AnyValue's array_value). */
export type Value = string | number | boolean | (string | number | boolean)[];

/** OTLP/JSON's shapes (ids as hex, int64 as strings), as far as the tests read them. */
interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
}
interface JsonKeyValue {
  key: string;
  value?: JsonAnyValue;
}
interface JsonRequest {
  resourceSpans?: {
    resource?: { attributes?: JsonKeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: JsonKeyValue[];
        status?: { code?: number };
      }[];
    }[];
  }[];
}

function fromJson(request: JsonRequest): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? [])
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          name: s.name,
          kind: s.kind,
          attributes: jsonAttributes(s.attributes),
          statusCode: s.status?.code ?? 0,
          resource,
        });
  }
  return out;
}

function jsonScalar(v: JsonAnyValue): string | number | boolean | undefined {
  return v.stringValue ?? v.boolValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.doubleValue);
}

function jsonAttributes(list: JsonKeyValue[] | undefined): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const kv of list ?? []) {
    const v = kv.value ?? {};
    const value = v.arrayValue
      ? (v.arrayValue.values ?? []).flatMap((item) => jsonScalar(item) ?? [])
      : jsonScalar(v);
    if (value !== undefined) out[kv.key] = value;
  }
  return out;
}

/** Protobuf fields of a message: number → list of values (varints as bigint, the rest as bytes). */
function fields(buf: Buffer): Map<number, (bigint | Buffer)[]> {
  const out = new Map<number, (bigint | Buffer)[]>();
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++] as number;
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const tag = Number(varint());
    const field = tag >> 3;
    const wire = tag & 7;
    let value: bigint | Buffer;
    if (wire === 0) value = varint();
    else if (wire === 1) {
      value = buf.subarray(i, i + 8);
      i += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      value = buf.subarray(i, i + len);
      i += len;
    } else if (wire === 5) {
      value = buf.subarray(i, i + 4);
      i += 4;
    } else throw new Error(`unexpected wire type ${wire}`);
    out.set(field, [...(out.get(field) ?? []), value]);
  }
  return out;
}

const bytes = (m: Map<number, (bigint | Buffer)[]>, f: number) => (m.get(f) ?? []) as Buffer[];
const first = (m: Map<number, (bigint | Buffer)[]>, f: number) => m.get(f)?.[0];

/** An AnyValue's scalar (fields 1 to 4: string, bool, int, double). */
function pbScalar(any: Map<number, (bigint | Buffer)[]>): string | number | boolean | undefined {
  if (any.has(1)) return (first(any, 1) as Buffer).toString('utf8');
  if (any.has(2)) return first(any, 2) === 1n;
  if (any.has(3)) return Number(BigInt.asIntN(64, first(any, 3) as bigint));
  if (any.has(4)) return (first(any, 4) as Buffer).readDoubleLE(0);
  return undefined;
}

function pbAttributes(list: Buffer[]): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const kvBytes of list) {
    const kv = fields(kvBytes);
    const key = (first(kv, 1) as Buffer).toString('utf8');
    const any = fields((first(kv, 2) as Buffer | undefined) ?? Buffer.alloc(0));
    // Field 5: an ArrayValue, whose field 1 repeats its AnyValues.
    const value = any.has(5)
      ? bytes(fields(first(any, 5) as Buffer), 1).flatMap((item) => pbScalar(fields(item)) ?? [])
      : pbScalar(any);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

function fromProtobuf(body: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rsBytes of bytes(fields(body), 1)) {
    const rs = fields(rsBytes);
    const resourceBytes = first(rs, 1) as Buffer | undefined;
    const resource = resourceBytes ? pbAttributes(bytes(fields(resourceBytes), 1)) : {};
    for (const ssBytes of bytes(rs, 2))
      for (const spanBytes of bytes(fields(ssBytes), 2)) {
        const s = fields(spanBytes);
        const status = first(s, 15) as Buffer | undefined;
        out.push({
          traceId: (first(s, 1) as Buffer).toString('hex'),
          spanId: (first(s, 2) as Buffer).toString('hex'),
          parentSpanId: ((first(s, 4) as Buffer | undefined) ?? Buffer.alloc(0)).toString('hex'),
          name: (first(s, 5) as Buffer).toString('utf8'),
          kind: Number(first(s, 6) ?? 0n),
          attributes: pbAttributes(bytes(s, 9)),
          statusCode: status ? Number(first(fields(status), 3) ?? 0n) : 0,
          resource,
        });
      }
  }
  return out;
}
