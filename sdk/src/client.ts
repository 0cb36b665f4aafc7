import createFetchClient, { type Client } from 'openapi-fetch';
import { apiKeysResource } from './api-keys.ts';
import { type AgentCall, type AgentRef, type CallOptions, callAgent, type TypedAgentCall } from './call.ts';
import { unwrap } from './errors.ts';
import type { paths } from './generated/openapi.ts';
import { invitationsResource } from './invitations.ts';
import { cursorPages, offsetPages } from './paginate.ts';
import { platformResource } from './platform.ts';
import { type RetryOptions, retryingFetch } from './retry.ts';
import { secretsResource, workspacesResource } from './workspaces.ts';

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

type Api = Client<paths>;
type Query<P extends keyof paths, M extends 'get'> = paths[P][M] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;
type Body<P extends keyof paths, M extends 'post' | 'patch' | 'put'> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;
type PageQuery<Q> = Omit<Q, 'limit' | 'offset'>;

/**
 * The typed client: `api` is openapi-fetch over the generated `paths` (every operation, typed);
 * the resource helpers unwrap bodies, throw AgentHostError on errors, and page lists.
 */
export function createClient(options: ClientOptions) {
  const baseFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const api: Api = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: options.retry === false ? baseFetch : retryingFetch(baseFetch, options.retry),
    headers: {
      ...options.headers,
      ...(options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {}),
    },
  });

  const tasks = {
    create: async (body: Body<'/tasks', 'post'>) => unwrap(await api.POST('/tasks', { body })),
    list: async (query: Query<'/tasks', 'get'> = {}) =>
      unwrap(await api.GET('/tasks', { params: { query } })),
    get: async (task_id: string) =>
      unwrap(await api.GET('/tasks/{task_id}', { params: { path: { task_id } } })),
    update: async (task_id: string, body: Body<'/tasks/{task_id}', 'patch'>) =>
      unwrap(await api.PATCH('/tasks/{task_id}', { params: { path: { task_id } }, body })),
    complete: async (task_id: string) =>
      unwrap(await api.POST('/tasks/{task_id}/complete', { params: { path: { task_id } } })),
    delete: async (task_id: string) =>
      unwrap(await api.DELETE('/tasks/{task_id}', { params: { path: { task_id } } })),
    /** Every task matching `query`, page by page. */
    iterate: (query: PageQuery<Query<'/tasks', 'get'>> = {}, pageSize = 50) =>
      offsetPages(async (page) => {
        const { tasks: items, total } = await tasks.list({ ...query, ...page });
        return { items, total };
      }, pageSize),
  };

  const call: AgentCall = <In extends object, Out>(
    ref: string | AgentRef<In, Out>,
    input: In,
    callOptions?: CallOptions,
  ) => callAgent<In, Out>(api, ref, input, callOptions);
  const typed: TypedAgentCall =
    <In extends object, Out>(ref: string | AgentRef<In, Out>, defaults: CallOptions = {}) =>
    (input: In, callOptions: CallOptions = {}) =>
      callAgent<In, Out>(api, ref, input, { ...defaults, ...callOptions });

  const agents = {
    publish: async (
      manifest: Body<'/agents', 'post'>,
      query: NonNullable<paths['/agents']['post']['parameters']['query']> = {},
    ) => unwrap(await api.POST('/agents', { body: manifest, params: { query } })),
    list: async (query: Query<'/agents', 'get'> = {}) =>
      unwrap(await api.GET('/agents', { params: { query } })),
    get: async (id: string) => unwrap(await api.GET('/agents/{id}', { params: { path: { id } } })),
    iterate: (query: PageQuery<Query<'/agents', 'get'>> = {}, pageSize = 50) =>
      offsetPages(async (page) => {
        const { agents: items, total } = await agents.list({ ...query, ...page });
        return { items, total };
      }, pageSize),
    /** A page of the version's execution logs, newest first (owners only; docs/logs.md). */
    logs: async (id: string, query: Query<'/agents/{id}/logs', 'get'> = {}) =>
      unwrap(await api.GET('/agents/{id}/logs', { params: { path: { id }, query } })),
    /** Every log line matching `query`, newest first, following next_cursor. */
    iterateLogs: (id: string, query: Omit<Query<'/agents/{id}/logs', 'get'>, 'cursor'> = {}) =>
      cursorPages(async (cursor) => {
        const page = await agents.logs(id, { ...query, ...(cursor ? { cursor } : {}) });
        return { items: page.logs, next: page.next_cursor };
      }),
    /** What deleting the version (or all its versions) touches, and the confirmation it needs. */
    deleteCheck: async (id: string) =>
      unwrap(await api.GET('/agents/{id}/delete-check', { params: { path: { id } } })),
    /** Soft-deletes the version (`mode: 'all_versions'`: every version); `force` past dependents. */
    delete: async (
      id: string,
      query: NonNullable<paths['/agents/{id}']['delete']['parameters']['query']> = {},
    ) => unwrap(await api.DELETE('/agents/{id}', { params: { path: { id }, query } })),
    /** Copies a public, source-available version as v1 of a new agent in a workspace the caller owns. */
    fork: async (id: string, body: Body<'/agents/{id}/fork', 'post'> = {}) =>
      unwrap(await api.POST('/agents/{id}/fork', { params: { path: { id } }, body })),
    /**
     * Calls `ref`: a typed ref (`agenthost-sdk types` writes one per agent) types the input and the
     * answer, `agents.call(summarise, { text })`; a plain `org/name@v2` takes type arguments,
     * `agents.call<{ text: string }, { summary: string }>('acme/summarise@v2', { text })`.
     */
    call,
    /** A function bound to one agent and its types, for repeated calls. */
    typed,
  };

  const schedules = {
    list: async (workspace_id: string, query: Query<'/workspaces/{workspace_id}/schedules', 'get'> = {}) =>
      unwrap(
        await api.GET('/workspaces/{workspace_id}/schedules', { params: { path: { workspace_id }, query } }),
      ),
    create: async (workspace_id: string, body: Body<'/workspaces/{workspace_id}/schedules', 'post'>) =>
      unwrap(
        await api.POST('/workspaces/{workspace_id}/schedules', { params: { path: { workspace_id } }, body }),
      ),
    get: async (workspace_id: string, schedule_id: string) =>
      unwrap(
        await api.GET('/workspaces/{workspace_id}/schedules/{schedule_id}', {
          params: { path: { workspace_id, schedule_id } },
        }),
      ),
    /** Changes the fields given; a new cron or time zone moves the next run, `version` pins it. */
    update: async (
      workspace_id: string,
      schedule_id: string,
      body: Body<'/workspaces/{workspace_id}/schedules/{schedule_id}', 'patch'>,
    ) =>
      unwrap(
        await api.PATCH('/workspaces/{workspace_id}/schedules/{schedule_id}', {
          params: { path: { workspace_id, schedule_id } },
          body,
        }),
      ),
    /** Removes it; its runs and timeline stay readable. */
    delete: async (workspace_id: string, schedule_id: string) =>
      unwrap(
        await api.DELETE('/workspaces/{workspace_id}/schedules/{schedule_id}', {
          params: { path: { workspace_id, schedule_id } },
        }),
      ),
    /** A page of its run history, newest first (`status: 'failed'` is error or timeout). */
    runs: async (
      workspace_id: string,
      schedule_id: string,
      query: Query<'/workspaces/{workspace_id}/schedules/{schedule_id}/runs', 'get'> = {},
    ) =>
      unwrap(
        await api.GET('/workspaces/{workspace_id}/schedules/{schedule_id}/runs', {
          params: { path: { workspace_id, schedule_id }, query },
        }),
      ),
    /** A page of its timeline, newest first. */
    events: async (
      workspace_id: string,
      schedule_id: string,
      query: Query<'/workspaces/{workspace_id}/schedules/{schedule_id}/events', 'get'> = {},
    ) =>
      unwrap(
        await api.GET('/workspaces/{workspace_id}/schedules/{schedule_id}/events', {
          params: { path: { workspace_id, schedule_id }, query },
        }),
      ),
    /** Sends a test alert to its alert_webhook_url and says whether it was delivered. */
    testAlert: async (workspace_id: string, schedule_id: string) =>
      unwrap(
        await api.POST('/workspaces/{workspace_id}/schedules/{schedule_id}/test-alert', {
          params: { path: { workspace_id, schedule_id } },
        }),
      ),
    trigger: async (
      workspace_id: string,
      schedule_id: string,
      body: Body<'/workspaces/{workspace_id}/schedules/{schedule_id}/trigger', 'post'> = {},
    ) =>
      unwrap(
        await api.POST('/workspaces/{workspace_id}/schedules/{schedule_id}/trigger', {
          params: { path: { workspace_id, schedule_id } },
          body,
        }),
      ),
    iterate: (
      workspace_id: string,
      query: PageQuery<Query<'/workspaces/{workspace_id}/schedules', 'get'>> = {},
      pageSize = 50,
    ) =>
      offsetPages(async (page) => {
        const { schedules: items, total } = await schedules.list(workspace_id, { ...query, ...page });
        return { items, total };
      }, pageSize),
  };

  const usage = {
    summary: async (query: Query<'/usage', 'get'> = {}) =>
      unwrap(await api.GET('/usage', { params: { query } })),
    /** Calls per hour or day over the range, oldest first, empty buckets included. */
    timeseries: async (query: Query<'/usage/timeseries', 'get'> = {}) =>
      unwrap(await api.GET('/usage/timeseries', { params: { query } })),
    /** The range's counters per group (`group_by`: agent, tenant, status, model, …), most calls first. */
    breakdown: async (query: Query<'/usage/breakdown', 'get'> = {}) =>
      unwrap(await api.GET('/usage/breakdown', { params: { query } })),
    /** The range's counters per X-Platform-Tenant value, `(none)` for calls sent without one. */
    tenants: async (query: Query<'/usage/tenants', 'get'> = {}) =>
      unwrap(await api.GET('/usage/tenants', { params: { query } })),
    /** Sandbox compute of the range: totals, per agent and per UTC day. */
    compute: async (query: Query<'/usage/compute', 'get'> = {}) =>
      unwrap(await api.GET('/usage/compute', { params: { query } })),
    logs: async (query: Query<'/usage/logs', 'get'> = {}) =>
      unwrap(await api.GET('/usage/logs', { params: { query } })),
    /** Every call record in the range, newest first, following next_cursor. */
    iterateLogs: (query: Omit<Query<'/usage/logs', 'get'>, 'cursor'> = {}) =>
      cursorPages(async (cursor) => {
        const page = await usage.logs({ ...query, ...(cursor ? { cursor } : {}) });
        return { items: page.logs, next: page.next_cursor };
      }),
  };

  /** The author's side: calls from any account to the agents of the workspaces the caller owns. */
  const authorUsage = {
    /** Totals, distinct callers and the credits callers paid (`earnings_credits`). */
    summary: async (query: Query<'/author-usage', 'get'> = {}) =>
      unwrap(await api.GET('/author-usage', { params: { query } })),
    timeseries: async (query: Query<'/author-usage/timeseries', 'get'> = {}) =>
      unwrap(await api.GET('/author-usage/timeseries', { params: { query } })),
    /** As usage.breakdown, plus `group_by: 'caller'` (the calling account's id). */
    breakdown: async (query: Query<'/author-usage/breakdown', 'get'> = {}) =>
      unwrap(await api.GET('/author-usage/breakdown', { params: { query } })),
    /** Call records, newest first; callers by account id, without their key ids. */
    logs: async (query: Query<'/author-usage/logs', 'get'> = {}) =>
      unwrap(await api.GET('/author-usage/logs', { params: { query } })),
  };

  const publicDirectory = {
    list: async (query: Query<'/public/agents', 'get'> = {}) =>
      unwrap(await api.GET('/public/agents', { params: { query } })),
    get: async (org: string, agent: string, version: string) =>
      unwrap(
        await api.GET('/public/agents/{org}/{agent}/{version}', {
          params: { path: { org, agent, version } },
        }),
      ),
    download: async (org: string, agent: string, version: string) =>
      unwrap(
        await api.GET('/public/agents/{org}/{agent}/{version}/download', {
          params: { path: { org, agent, version } },
        }),
      ),
    iterate: (query: PageQuery<Query<'/public/agents', 'get'>> = {}, pageSize = 50) =>
      offsetPages(async (page) => {
        const { agents: items, total } = await publicDirectory.list({ ...query, ...page });
        return { items, total };
      }, pageSize),
  };

  const services = {
    list: async (workspace_id: string, query: Query<'/workspaces/{workspace_id}/services', 'get'> = {}) =>
      unwrap(
        await api.GET('/workspaces/{workspace_id}/services', { params: { path: { workspace_id }, query } }),
      ),
    /** Deploys an always-on agent (org/name, or org/name@v3 to pin a version); it starts provisioning. */
    deploy: async (workspace_id: string, body: Body<'/workspaces/{workspace_id}/services', 'post'>) =>
      unwrap(
        await api.POST('/workspaces/{workspace_id}/services', { params: { path: { workspace_id } }, body }),
      ),
    /** The service with its recent events, newest first. */
    get: async (workspace_id: string, service_id: string) =>
      unwrap(
        await api.GET('/workspaces/{workspace_id}/services/{service_id}', {
          params: { path: { workspace_id, service_id } },
        }),
      ),
    /** Changes its settings (env and secrets replace the whole set); a running service restarts. */
    patch: async (
      workspace_id: string,
      service_id: string,
      body: Body<'/workspaces/{workspace_id}/services/{service_id}', 'patch'>,
    ) =>
      unwrap(
        await api.PATCH('/workspaces/{workspace_id}/services/{service_id}', {
          params: { path: { workspace_id, service_id } },
          body,
        }),
      ),
    /** Restarts the same version; resumes a paused service. */
    restart: async (workspace_id: string, service_id: string) =>
      unwrap(
        await api.POST('/workspaces/{workspace_id}/services/{service_id}/restart', {
          params: { path: { workspace_id, service_id } },
        }),
      ),
    /** Moves to a newly published version: the newest, or `{ version: 'v3' }` (which pins it). */
    update: async (
      workspace_id: string,
      service_id: string,
      body: Body<'/workspaces/{workspace_id}/services/{service_id}/update', 'post'> = {},
    ) =>
      unwrap(
        await api.POST('/workspaces/{workspace_id}/services/{service_id}/update', {
          params: { path: { workspace_id, service_id } },
          body,
        }),
      ),
    /** Stops and deletes it. */
    delete: async (workspace_id: string, service_id: string) =>
      unwrap(
        await api.DELETE('/workspaces/{workspace_id}/services/{service_id}', {
          params: { path: { workspace_id, service_id } },
        }),
      ),
    iterate: (workspace_id: string, pageSize = 50) =>
      offsetPages(async (page) => {
        const { services: items, total } = await services.list(workspace_id, page);
        return { items, total };
      }, pageSize),
    /** A page of the app's log lines, newest first; the shape agent logs have (docs/logs.md). */
    logs: async (
      workspace_id: string,
      service_id: string,
      query: Query<'/workspaces/{workspace_id}/services/{service_id}/logs', 'get'> = {},
    ) =>
      unwrap(
        await api.GET('/workspaces/{workspace_id}/services/{service_id}/logs', {
          params: { path: { workspace_id, service_id }, query },
        }),
      ),
    /** Every log line matching `query`, newest first, following next_cursor. */
    iterateLogs: (
      workspace_id: string,
      service_id: string,
      query: Omit<Query<'/workspaces/{workspace_id}/services/{service_id}/logs', 'get'>, 'cursor'> = {},
    ) =>
      cursorPages(async (cursor) => {
        const page = await services.logs(workspace_id, service_id, {
          ...query,
          ...(cursor ? { cursor } : {}),
        });
        return { items: page.logs, next: page.next_cursor };
      }),
  };

  // Not here: POST /billing/webhook (Stripe calls it, signed), GET /billing/checkout/{session_id}
  // (an HTML page for a browser) and GET /billing/history (the same list as transactions).
  const billing = {
    /** The account's balance in credits (one credit is one US cent). */
    balance: async () => unwrap(await api.GET('/billing/balance')),
    /** Starts a top-up: pay at the answer's checkout_url; the credits land once it is paid. */
    checkout: async (body: Body<'/billing/checkout', 'post'>) =>
      unwrap(await api.POST('/billing/checkout', { body })),
    /** Ledger entries (top-ups, charges, refunds), newest first. */
    transactions: async (query: Query<'/billing/transactions', 'get'> = {}) =>
      unwrap(await api.GET('/billing/transactions', { params: { query } })),
    iterateTransactions: (pageSize = 50) =>
      offsetPages(async (page) => {
        const { transactions: items, total } = await billing.transactions(page);
        return { items, total };
      }, pageSize),
    /** Local payments only (PLATFORM_PAYMENTS=local): pays a checkout, as its page's button does. */
    confirmLocalCheckout: async (session_id: string) =>
      unwrap(await api.POST('/billing/checkout/{session_id}/confirm', { params: { path: { session_id } } })),
  };

  return {
    api,
    tasks,
    workspaces: workspacesResource(api),
    invitations: invitationsResource(api),
    secrets: secretsResource(api),
    agents,
    schedules,
    apiKeys: apiKeysResource(api),
    usage,
    authorUsage,
    public: publicDirectory,
    services,
    billing,
    platform: platformResource(api),
  };
}

export type AgentHostClient = ReturnType<typeof createClient>;
