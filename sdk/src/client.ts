import createFetchClient, { type Client } from 'openapi-fetch';
import { type AgentCall, type AgentRef, type CallOptions, callAgent, type TypedAgentCall } from './call.ts';
import type { JsonValue, paths } from './generated/openapi.ts';
import { createResources } from './generated/resources.ts';
import { helper, method } from './operations.ts';
import { type RetryOptions, retryingFetch } from './retry.ts';
import { type FollowOptions, followRun, type Run, startRun, type WaitOptions, waitForRun } from './runs.ts';
import { type StreamEvent, streamAgent } from './stream.ts';

export interface ClientOptions {
  /** The platform's base URL, such as http://localhost:3000. */
  baseUrl: string;
  /** An API key (ahk_…); public routes work without one. */
  apiKey?: string;
  /** Retries of retryable errors (false: none). */
  retry?: RetryOptions | false;
  /** A fetch to send requests with (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

/**
 * The typed client: `api` is openapi-fetch over the generated `paths` (every operation, typed);
 * the resources (generated/resources.ts, one method per operation, generated from the route
 * table) unwrap bodies, throw AgentHostError on errors, and page lists. Written by hand here:
 * what one generated method cannot say, the agent call (typed refs, files, the default endpoint).
 */
export function createClient(options: ClientOptions) {
  const baseFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const api: Client<paths> = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: options.retry === false ? baseFetch : retryingFetch(baseFetch, options.retry),
    headers: {
      ...options.headers,
      ...(options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {}),
    },
  });
  const resources = createResources(api);

  const call: AgentCall = method(
    'callAgent',
    <In extends object, Out>(ref: string | AgentRef<In, Out>, input: In, callOptions?: CallOptions) =>
      callAgent<In, Out>(api, ref, input, callOptions),
  );
  const typed: TypedAgentCall = helper(
    'callAgent',
    <In extends object, Out>(ref: string | AgentRef<In, Out>, defaults: CallOptions = {}) =>
      (input: In, callOptions: CallOptions = {}) =>
        callAgent<In, Out>(api, ref, input, { ...defaults, ...callOptions }),
  );

  const stream = helper(
    'callAgent',
    <In extends object = Record<string, JsonValue>, Out = Record<string, JsonValue>>(
      ref: string | AgentRef<In, Out>,
      input: In,
      callOptions?: CallOptions,
    ): AsyncGenerator<StreamEvent<Out>, void, undefined> =>
      streamAgent<In, Out>(api, ref, input, callOptions),
  );

  const start = helper(
    'callAgent',
    <In extends object = Record<string, JsonValue>>(
      ref: string | AgentRef<In, unknown>,
      input: In,
      callOptions?: CallOptions,
    ): Promise<Run> => startRun<In>(api, ref, input, callOptions),
  );
  const wait = helper('getRun', (runId: string, waitOptions?: WaitOptions) =>
    waitForRun(resources.runs.get, runId, waitOptions),
  );
  const follow = helper('getRunEvents', (runId: string, followOptions?: FollowOptions) =>
    followRun(api, runId, followOptions),
  );

  return {
    api,
    ...resources,
    runs: {
      ...resources.runs,
      /** Reads the run until it has ended (every intervalMs, 1 s by default); the ended run. */
      wait,
      /**
       * The run's events as they are logged, to its last (`result` or `error`): `for await (const e
       * of client.runs.follow(id))`. A dropped connection is opened again after the last event read.
       */
      follow,
    },
    agents: {
      ...resources.agents,
      /**
       * Calls `ref`: a typed ref (`agenthost-sdk types` writes one per agent) types the input and the
       * answer, `agents.call(summarise, { text })`; a plain `org/name@v2` takes type arguments,
       * `agents.call<{ text: string }, { summary: string }>('acme/summarise@v2', { text })`.
       */
      call,
      /** A function bound to one agent and its types, for repeated calls. */
      typed,
      /**
       * Calls `ref` as Server-Sent Events: an async iterator of `delta` (the answer as the model
       * writes it), `step` (a managed loop's tool and sub-agent calls) and last `result` (what
       * `call` returns); `for await (const e of client.agents.stream(ref, input))`. Leaving the
       * loop early hangs up, which stops the call.
       */
      stream,
      /**
       * Starts `ref` without waiting (`Prefer: respond-async`): the run, once the call is admitted
       * and charged; `runs.wait` or `runs.follow` for its answer (docs/runs.md).
       */
      start,
    },
  };
}

export type AgentHostClient = ReturnType<typeof createClient>;
