import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { CallResponse } from '../../functions/core/calls/call-context.ts';
import { streamedCall } from '../../functions/edge/streamed-call.ts';
import { buildOpenApi } from '../../functions/platform/openapi.ts';
import { routeList } from '../../functions/platform/routes.ts';
import { ERROR_CODES, PlatformError } from '../../functions/shared/errors.ts';
import { readEventStream } from '../helpers/event-stream.ts';

type Json = Record<string, unknown>;
interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<
    string,
    { headers?: Record<string, unknown>; content?: Record<string, { schema: Json }> }
  >;
}

const doc = buildOpenApi() as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json>; headers: Record<string, unknown> };
};
const operations = Object.values(doc.paths).flatMap((ops) => Object.values(ops));
const op = (id: string) => operations.find((o) => o.operationId === id)!;

/** Every schema position under `s` whose schema allows any value without saying it is JSON. */
function untyped(s: unknown, at: string, out: string[]): string[] {
  if (!s || typeof s !== 'object') return out;
  const schema = s as Json;
  const keys = Object.keys(schema).filter((k) => !['description', 'title', 'default'].includes(k));
  if (keys.length === 0) out.push(at);
  if (schema.type === 'object' && !schema.properties && !schema.additionalProperties)
    out.push(`${at} (object)`);
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'default' || k === 'examples') continue;
    if (['properties', 'patternProperties'].includes(k)) {
      for (const [name, sub] of Object.entries(v as Json)) untyped(sub, `${at}.${name}`, out);
    } else if (Array.isArray(v)) {
      for (const [i, sub] of v.entries()) untyped(sub, `${at}.${k}[${i}]`, out);
    } else if (v && typeof v === 'object') untyped(v, `${at}.${k}`, out);
  }
  return out;
}

describe('the OpenAPI document is fully typed', () => {
  it('gives every success a body schema (204s none) and no body an untyped schema', () => {
    const problems: string[] = [];
    for (const o of operations) {
      for (const [status, res] of Object.entries(o.responses)) {
        if (status === '204') {
          assert.equal(res.content, undefined, `${o.operationId} 204 has no body`);
          continue;
        }
        assert.ok(res.content, `${o.operationId} ${status} documents its body`);
        for (const [type, media] of Object.entries(res.content))
          untyped(media.schema, `${o.operationId} ${status} ${type}`, problems);
      }
      for (const [type, media] of Object.entries(o.requestBody?.content ?? {}))
        untyped(media.schema, `${o.operationId} request ${type}`, problems);
    }
    for (const [name, schema] of Object.entries(doc.components.schemas))
      untyped(schema, `components.${name}`, problems);
    assert.deepEqual(problems, []);
  });

  it('types the call envelope, its JSON and multipart inputs and its headers', () => {
    const call = op('callAgent');
    const ok = call.responses['200']!;
    assert.ok(ok.headers?.Deprecation && ok.headers.Sunset && ok.headers.Link, 'deprecation headers');
    const envelope = ok.content?.['application/json']?.schema as { properties: Record<string, Json> };
    assert.deepEqual(envelope.properties.data?.additionalProperties, {
      $ref: '#/components/schemas/JsonValue',
    });
    assert.deepEqual(Object.keys(envelope.properties), ['data', 'warnings', 'metadata']);
    assert.deepEqual(envelope.properties.metadata?.required, ['request_id', 'processing_time_ms', 'version']);
    const multipart = call.requestBody?.content['multipart/form-data']?.schema as { properties: Json };
    assert.deepEqual(Object.keys(multipart.properties), ['file', 'files[]', 'metadata']);
    const headers = (call.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
    for (const h of [
      'X-Platform-Max-Hops',
      'X-Platform-Deadline-Ms',
      'X-Platform-Tenant',
      'X-Platform-Skills',
    ])
      assert.ok(headers.includes(h), h);
    assert.ok(op('triggerWebhook').parameters?.some((p) => p.name === 'idempotency-key'));
  });

  it('documents per status the error codes it carries, and the spec’s response headers everywhere', () => {
    for (const o of operations) {
      for (const [status, res] of Object.entries(o.responses)) {
        assert.ok(res.headers?.['X-Request-Id'], `${o.operationId} ${status}: X-Request-Id`);
        for (const h of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])
          assert.ok(res.headers?.[h], `${o.operationId} ${status}: ${h}`);
        if (Number(status) < 400) continue;
        const schema = res.content?.['application/json']?.schema as { allOf: Json[] };
        const codes = (
          schema.allOf[1] as { properties: { error: { properties: { code: { enum: string[] } } } } }
        ).properties.error.properties.code.enum;
        assert.ok(codes.length > 0);
        for (const code of codes)
          assert.equal(String(ERROR_CODES[code as keyof typeof ERROR_CODES].status), status, code);
        assert.equal(
          Boolean(res.headers?.['Retry-After']),
          status === '429' || status === '503',
          `${o.operationId} ${status}`,
        );
      }
    }
    const codesOf = (id: string, status: string) =>
      JSON.stringify(op(id).responses[status]?.content?.['application/json']?.schema);
    assert.match(codesOf('downloadPublicAgent', '403'), /\["DOWNLOAD_DISABLED","PAID_AGENT_SERVER_ONLY"\]/);
    for (const status of ['402', '403', '422', '429', '502', '504'])
      assert.ok(op('callAgent').responses[status]);
    assert.match(codesOf('callAgent', '400'), /\["INVALID_INPUT","MISSING_SECRETS"\]/);
    assert.equal(op('listPublicAgents').responses['401'], undefined, 'public routes need no key');
  });

  it('keeps every route and its security', () => {
    for (const [id, route] of routeList) {
      const o = doc.paths[route.path]?.[route.method.toLowerCase()] as Operation & { security: unknown[] };
      assert.equal(o.operationId, id);
      assert.deepEqual(o.security, route.auth === 'api-key' ? [{ apiKey: [] }] : []);
    }
  });
});

describe('the OpenAPI document describes every operation and the streamed answer', () => {
  it('gives every operation a description of its own (Spectral’s operation-description)', () => {
    const without = operations.filter((o) => !o.description?.trim()).map((o) => o.operationId);
    assert.deepEqual(without, []);
    for (const o of operations) assert.notEqual(o.description, o.summary, o.operationId);
    assert.match(op('getAgent').description ?? '', /Needs the member role/, 'a role route says its role');
  });

  /** The call route's text/event-stream schema: what each event's `data:` line holds. */
  const sse = op('callAgent').responses['200']?.content?.['text/event-stream']?.schema as {
    description: string;
    oneOf: (Json & { title: string })[];
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const validate = (schema: Json) => ajv.compile({ ...schema, components: doc.components });

  /** Every event a streamed call sends (the call's own writer: streamed-call.ts), in order. */
  const sent = async (call: Parameters<typeof streamedCall>[1]) => {
    const reply = await streamedCall('req_doc', call);
    assert.ok(reply instanceof Response);
    return (await readEventStream(reply, Date.now())).events;
  };
  const body: CallResponse = {
    body: {
      data: { ok: true },
      warnings: [],
      metadata: { processing_time_ms: 3, version: 'v1', trace_id: 'a'.repeat(32) },
    },
    headers: {},
  };

  it('describes the streamed call’s events as a schema: each event the code sends is the variant of its name', async () => {
    assert.match(sse.description, /data:/);
    const events = [
      ...(await sent(async (stream) => {
        const events = stream.open({});
        events.delta('Hello');
        events.step({ kind: 'tool', name: 'search', outcome: 'ok', duration_ms: 12.5 });
        events.step({ kind: 'agent', name: 'acme/helper/v2', outcome: 'error', duration_ms: 3 });
        return body;
      })),
      ...(await sent(async (stream) => {
        stream.open({});
        throw new PlatformError('LLM_ERROR', 'The model failed mid-stream');
      })),
    ];
    assert.deepEqual([...new Set(events.map((e) => e.event))], ['delta', 'step', 'result', 'error']);
    assert.deepEqual(
      sse.oneOf.map((v) => v.title).sort(),
      ['delta', 'error', 'result', 'step'],
      'one variant for each event the code sends, and no other',
    );
    const whole = validate(sse as unknown as Json);
    for (const e of events) {
      const data = JSON.parse(e.data) as unknown;
      const variant = sse.oneOf.find((v) => v.title === e.event);
      assert.ok(variant, `${e.event}: documented`);
      const check = validate(variant);
      assert.ok(check(data), `${e.event}: ${ajv.errorsText(check.errors)} in ${e.data}`);
      assert.ok(whole(data), `${e.event}: exactly one variant (${ajv.errorsText(whole.errors)})`);
    }
    // The result is the plain call's JSON answer, schema and all.
    const json = op('callAgent').responses['200']?.content?.['application/json']?.schema;
    assert.deepEqual(
      Object.keys(
        (sse.oneOf.find((v) => v.title === 'result') as unknown as { properties: Json }).properties,
      ),
      Object.keys((json as { properties: Json }).properties),
    );
  });
});
