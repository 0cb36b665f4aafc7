import { Agent, request } from 'undici';

/* The prompt agent the call benches publish and call, and the key they use (the bootstrap account's). */

export const BENCH_KEY = `ahk_bench_${'x'.repeat(40)}`;

/** The environment a bench's platform starts with: loopback, its own data dir, the fake model. */
export function benchPlatformEnv(dataDir: string, modelUrl: string): Record<string, string> {
  return {
    HOST: '127.0.0.1',
    PORT: '0',
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_LOG_LEVEL: 'warn',
    PLATFORM_BOOTSTRAP_TIER: 'enterprise',
    PLATFORM_BOOTSTRAP_API_KEY: BENCH_KEY,
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: modelUrl,
  };
}

/**
 * The call benches' client: `connections` per gateway, one request at a time on each. An idle
 * connection is let go after 4 s, before any gateway's server closes it (Node's 5 s): a gateway left
 * idle while the others were measured closed one as a call was sent on it.
 */
export function benchDispatcher(connections: number): Agent {
  return new Agent({ connections, pipelining: 1, keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000 });
}

/** Publishes the bench's prompt agent on a platform, as its bootstrap account. */
export async function publishAgent(url: string, dispatcher: Agent): Promise<void> {
  const publish = await request(`${url}/agents`, {
    method: 'POST',
    dispatcher,
    headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'bench-echo',
      description: 'Benchmark agent.',
      supported_providers: ['openai'],
      prompt_template: 'Echo {{text}}',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    }),
  });
  if (publish.statusCode !== 201)
    throw new Error(`publish answered ${publish.statusCode}: ${await publish.body.text()}`);
  await publish.body.dump();
}

/** One call of the bench's agent; resolves with its status. */
export function callAgent(url: string, dispatcher: Agent): () => Promise<number> {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${BENCH_KEY}` };
  const body = JSON.stringify({ text: 'hello' });
  return async () => {
    const res = await request(`${url}/local/bench-echo/v1/run`, {
      method: 'POST',
      dispatcher,
      headers,
      body,
    });
    // A failed call stops the bench: what it answered says why.
    if (res.statusCode !== 200)
      process.stderr.write(`${url} answered ${res.statusCode}: ${(await res.body.text()).slice(0, 500)}\n`);
    else await res.body.dump();
    return res.statusCode;
  };
}

export interface ComparedSide {
  /** The checkout whose platform runs. */
  dir: string;
  /** Extra environment for its platform. */
  env: Record<string, string>;
}

/**
 * The two platforms a comparing bench measures (calls-together, calls-instructions): BENCH_A_DIR
 * and BENCH_B_DIR (checkouts; default `root`), BENCH_A_ENV and BENCH_B_ENV (JSON objects of extra
 * environment; default traces on against PLATFORM_TRACES=off).
 */
export function comparedSides(root: string): { A: ComparedSide; B: ComparedSide } {
  const side = (name: 'A' | 'B', env: string): ComparedSide => ({
    dir: process.env[`BENCH_${name}_DIR`] ?? root,
    env: JSON.parse(process.env[`BENCH_${name}_ENV`] ?? env) as Record<string, string>,
  });
  return { A: side('A', '{}'), B: side('B', '{"PLATFORM_TRACES":"off"}') };
}
