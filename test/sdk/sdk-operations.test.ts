import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildOpenApi } from '../../functions/platform/openapi.ts';
import { createClient } from '../../sdk/src/client.ts';
import { registered } from '../../sdk/src/operations.ts';

/**
 * Every operation of the OpenAPI document has exactly one typed method on the SDK's client, and
 * that method sends it. The client is walked as an application sees it (every resource object,
 * every function on it); its requests go to a recording fetch, never to a network.
 */
type Operation = { method: string; path: string };

function documentOperations(): Map<string, Operation> {
  const ops = new Map<string, Operation>();
  const paths = buildOpenApi().paths as Record<string, Record<string, { operationId: string }>>;
  for (const [path, item] of Object.entries(paths))
    for (const [method, op] of Object.entries(item))
      ops.set(op.operationId, { method: method.toUpperCase(), path });
  return ops;
}

function recordingClient() {
  const sent: Operation[] = [];
  const client = createClient({
    baseUrl: 'http://127.0.0.1:9',
    retry: false,
    fetch: async (request) => {
      sent.push({ method: request.method, path: new URL(request.url).pathname });
      return Response.json({});
    },
  });
  return { client, sent };
}

type Fn = (...args: unknown[]) => unknown;

/** Every function on the client's resources, by its place (`tasks.create`). */
function clientFunctions(client: ReturnType<typeof createClient>): Map<string, Fn> {
  const out = new Map<string, Fn>();
  for (const [resource, members] of Object.entries(client)) {
    if (resource === 'api') continue; // openapi-fetch itself: the untyped-by-name escape hatch
    for (const [name, value] of Object.entries(members as Record<string, unknown>))
      if (typeof value === 'function') out.set(`${resource}.${name}`, value as Fn);
  }
  return out;
}

describe('the SDK client’s methods', () => {
  const operations = documentOperations();
  const { client, sent } = recordingClient();
  const functions = clientFunctions(client);

  it('are each an operation’s method or a helper over one', () => {
    const unknown = [...functions].filter(([, fn]) => !registered(fn)).map(([place]) => place);
    assert.deepEqual(
      unknown,
      [],
      `not registered as an operation's method or helper (sdk/src/operations.ts)`,
    );
    const strangers = [...functions]
      .filter(([, fn]) => !operations.has(registered(fn)?.operationId ?? ''))
      .map(([place, fn]) => `${place} (${registered(fn)?.operationId})`);
    assert.deepEqual(strangers, [], 'registered for an operation the document does not have');
  });

  it('give every operation exactly one method', () => {
    const methods = new Map<string, string[]>();
    for (const [place, fn] of functions) {
      const r = registered(fn);
      if (r?.role === 'method') methods.set(r.operationId, [...(methods.get(r.operationId) ?? []), place]);
    }
    const wrong = [...operations.keys()]
      .map((id) => ({ id, found: methods.get(id) ?? [] }))
      .filter(({ found }) => found.length !== 1)
      .map(
        ({ id, found }) => `operation ${id} has ${found.length} methods on the client: ${found.join(', ')}`,
      );
    assert.deepEqual(wrong, [], 'every operation needs exactly one method (npm run sdk:generate)');
  });

  it('send the operation they are the method of', async () => {
    for (const [place, fn] of functions) {
      const r = registered(fn);
      if (r?.role !== 'method') continue;
      const op = operations.get(r.operationId) as Operation;
      const params = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => `p-${m[1]}`);
      // The agent call takes a ref (org/name@version/endpoint), not its path parameters one by one.
      const args = r.operationId === 'callAgent' ? ['p-org/p-agent@v1/p-endpoint', {}] : params;
      sent.length = 0;
      await fn(...args);
      const pattern = new RegExp(`^${op.path.replace(/\{[^}]+\}/g, '[^/]+').replaceAll('.', '\\.')}$`);
      assert.equal(sent.length, 1, `${place} (${r.operationId}) sent ${sent.length} requests`);
      assert.equal(sent[0]?.method, op.method, `${place} (${r.operationId}) sent the wrong method`);
      assert.match(sent[0]?.path ?? '', pattern, `${place} (${r.operationId}) sent another path`);
    }
  });
});
