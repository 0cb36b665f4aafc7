import type { Client } from 'openapi-fetch';
import { unwrap } from './errors.ts';
import { type FileInput, toNamedBlob } from './files.ts';
import type { JsonValue, paths } from './generated/openapi.ts';

export type CallEnvelope =
  paths['/{org}/{agent}/{version}/{endpoint}']['post']['responses'][200]['content']['application/json'];
/** What one event of a streamed call holds, its `data:` line (docs/calls.md, "Streamed calls"). */
export type CallStreamData =
  paths['/{org}/{agent}/{version}/{endpoint}']['post']['responses'][200]['content']['text/event-stream'];
/** A call started with `Prefer: respond-async`: its run, answered 202 (docs/runs.md). */
export type RunStarted =
  paths['/{org}/{agent}/{version}/{endpoint}']['post']['responses'][202]['content']['application/json'];
type CallHeaders = NonNullable<paths['/{org}/{agent}/{version}/{endpoint}']['post']['parameters']['header']>;

export interface CallOptions {
  /**
   * The agent's endpoint. Without one (here or in the ref), the agent's own default_endpoint: `run`
   * is tried, and an agent whose manifest names another is called again there (one more request,
   * made only then, before anything ran).
   */
  endpoint?: string;
  /** Sent as multipart/form-data: the input travels as the `metadata` part. */
  files?: FileInput[];
  /** X-Platform-Deadline-Ms: the call's deadline (a Date or epoch milliseconds). */
  deadline?: Date | number;
  /** A deadline this many milliseconds from now (the earlier of the two wins). */
  timeoutMs?: number;
  /** X-Platform-Max-Hops: the deepest call chain an orchestrator may start. */
  maxHops?: number;
  /** X-Platform-Tenant: recorded with the call for usage attribution. */
  tenant?: string;
  /**
   * X-Platform-Webhook, with `agents.start` only: a URL the run's document is POSTed to once it
   * ended, signed with the account's webhook signing secret (check it with verifyWebhook).
   */
  webhook?: string;
  /** X-Platform-Skills: skill refs added to the agent's defaults. */
  skills?: string[];
  /** X-Platform-Skills-Only: only these skills, ignoring the defaults. */
  skillsOnly?: string[];
  /** X-Platform-No-Skills. */
  noSkills?: boolean;
  provider?: CallHeaders['X-Platform-Provider'];
  model?: string;
  /**
   * W3C traceparent: the call joins this trace. Default: the TRACEPARENT variable a sandboxed run is
   * given, so an orchestrator's sub-calls hang under its run in the platform's trace.
   */
  traceparent?: string;
  signal?: AbortSignal;
}

export interface CallResult<Out> {
  data: Out;
  warnings: CallEnvelope['warnings'];
  metadata: CallEnvelope['metadata'];
  /** Set when the version called is deprecated (spec "Versioning"). */
  deprecation?: { sunset: string | null; successor: string | null };
  /** The answer's headers: X-Request-Id, X-RateLimit-Limit, -Remaining and -Reset, Deprecation … */
  headers: Headers;
}

/**
 * An agent ref that carries the agent's input and output types, so a call needs no type
 * arguments: `client.agents.call(summarise, input)` checks `input` and types the answer. The
 * modules `agenthost-sdk types` writes (agent-types.ts) export one per agent; `agentRef` makes one
 * by hand. `types` exists only for the compiler: it is never set.
 */
export interface AgentRef<In extends object, Out> {
  readonly ref: string;
  readonly types?: { readonly input: In; readonly output: Out };
}

/** A typed ref for `ref` (org/name@v2), checked now rather than at the first call. */
export function agentRef<In extends object, Out>(ref: string): AgentRef<In, Out> {
  parseAgentRef(ref);
  return { ref };
}

/**
 * `agents.call`: typed by an AgentRef (the input is checked against its type, never inferred from
 * the argument), or by type arguments with a plain ref (default: JSON objects in and out).
 */
export interface AgentCall {
  <In extends object, Out>(
    ref: AgentRef<In, Out>,
    input: NoInfer<In>,
    options?: CallOptions,
  ): Promise<CallResult<Out>>;
  <In extends object = Record<string, JsonValue>, Out = Record<string, JsonValue>>(
    ref: string,
    input: In,
    options?: CallOptions,
  ): Promise<CallResult<Out>>;
}

/** `agents.typed`: a function bound to one agent, its types from an AgentRef or type arguments. */
export interface TypedAgentCall {
  <In extends object, Out>(
    ref: AgentRef<In, Out>,
    defaults?: CallOptions,
  ): (input: In, options?: CallOptions) => Promise<CallResult<Out>>;
  <In extends object, Out>(
    ref: string,
    defaults?: CallOptions,
  ): (input: In, options?: CallOptions) => Promise<CallResult<Out>>;
}

/** The ref's text, from a plain string or a typed ref. */
export function refText(ref: string | AgentRef<object, unknown>): string {
  return typeof ref === 'string' ? ref : ref.ref;
}

/** `org/name@v2`, `org/name/v2`, each optionally followed by `/endpoint`. */
export function parseAgentRef(ref: string): {
  org: string;
  agent: string;
  version: string;
  endpoint?: string;
} {
  const m = /^([^/@]+)\/([^/@]+)(?:@|\/)(v[1-9][0-9]*)(?:\/([^/]+))?$/.exec(ref);
  if (!m) throw new TypeError(`Not an agent ref such as org/name@v2: ${JSON.stringify(ref)}`);
  return { org: m[1]!, agent: m[2]!, version: m[3]!, ...(m[4] ? { endpoint: m[4] } : {}) };
}

export function callHeaders(options: CallOptions): CallHeaders {
  const deadlines = [
    options.deadline instanceof Date ? options.deadline.getTime() : options.deadline,
    options.timeoutMs !== undefined ? Date.now() + options.timeoutMs : undefined,
  ].filter((d): d is number => d !== undefined);
  const h: CallHeaders = {};
  if (deadlines.length > 0) h['X-Platform-Deadline-Ms'] = String(Math.floor(Math.min(...deadlines)));
  if (options.maxHops !== undefined) h['X-Platform-Max-Hops'] = String(options.maxHops);
  if (options.tenant !== undefined) h['X-Platform-Tenant'] = options.tenant;
  if (options.webhook !== undefined) h['X-Platform-Webhook'] = options.webhook;
  if (options.skills) h['X-Platform-Skills'] = options.skills.join(',');
  if (options.skillsOnly) h['X-Platform-Skills-Only'] = options.skillsOnly.join(',');
  if (options.noSkills !== undefined) h['X-Platform-No-Skills'] = options.noSkills ? 'true' : 'false';
  if (options.provider) h['X-Platform-Provider'] = options.provider;
  if (options.model) h['X-Platform-Model'] = options.model;
  const traceparent = options.traceparent ?? runTraceparent();
  if (traceparent) h.traceparent = traceparent;
  return h;
}

/** The TRACEPARENT of the sandboxed run this code is in, if any (undefined outside Node). */
function runTraceparent(): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.TRACEPARENT || undefined;
}

/** The spec's multipart form: `file` for one file, `files[]` repeated for several, `metadata` the input. */
async function multipart(input: Record<string, unknown>, files: FileInput[]): Promise<FormData> {
  const form = new FormData();
  const part = files.length === 1 ? 'file' : 'files[]';
  for (const file of files) {
    const { blob, name } = await toNamedBlob(file);
    form.append(part, blob, name);
  }
  form.append('metadata', JSON.stringify(input));
  return form;
}

/** The manifest's default_endpoint when none is declared (docs/manifest.md). */
const DEFAULT_ENDPOINT = 'run';

/** The endpoint a 404 "no such endpoint" names as the agent's own (core/calls/gateway.ts). */
function defaultEndpointOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const envelope = error as { error?: { code?: unknown; details?: Record<string, unknown> } };
  const named = envelope.error?.details?.default_endpoint;
  return envelope.error?.code === 'NOT_FOUND' && typeof named === 'string' && /^[^/]+$/.test(named)
    ? named
    : undefined;
}

/**
 * Calls an agent. `In` and `Out` are the agent's input and output types (from its input_schema and
 * output_schema); without them, input is a JSON object and output any JSON object.
 */
export async function callAgent<
  In extends object = Record<string, JsonValue>,
  Out = Record<string, JsonValue>,
>(
  api: Client<paths>,
  ref: string | AgentRef<In, Out>,
  input: In,
  options: CallOptions = {},
): Promise<CallResult<Out>> {
  const result = await sendCall(api, refText(ref), input, options);
  const envelope = jsonAnswer(unwrap(result));
  return callResult<Out>(envelope, result.response.headers);
}

/** A call's result from its envelope and the answer's headers. */
export function callResult<Out>(envelope: CallEnvelope, headers: Headers): CallResult<Out> {
  const successor = /<([^>]+)>;\s*rel="successor-version"/.exec(headers.get('link') ?? '')?.[1] ?? null;
  return {
    data: envelope.data as Out,
    warnings: envelope.warnings,
    metadata: envelope.metadata,
    headers,
    ...(headers.get('deprecation') ? { deprecation: { sunset: headers.get('sunset'), successor } } : {}),
  };
}

/**
 * POSTs the call (multipart when it has files) to the ref's endpoint, or to the agent's own
 * default endpoint: `stream` asks for Server-Sent Events and leaves the body unread.
 */
export async function sendCall(
  api: Client<paths>,
  ref: string,
  input: object,
  options: CallOptions,
  /** `stream`: as Server-Sent Events; `run`: started without waiting (`Prefer: respond-async`). */
  as: 'json' | 'stream' | 'run' = 'json',
) {
  const { org, agent, version, endpoint } = parseAgentRef(ref);
  const form = options.files?.length
    ? await multipart(input as Record<string, unknown>, options.files)
    : undefined;
  const post = (to: string) =>
    api.POST('/{org}/{agent}/{version}/{endpoint}', {
      params: { path: { org, agent, version, endpoint: to }, header: callHeaders(options) },
      body: (form ? {} : input) as Record<string, JsonValue>,
      ...(form ? { bodySerializer: () => form } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(as === 'stream' ? { parseAs: 'stream' as const, headers: { Accept: 'text/event-stream' } } : {}),
      ...(as === 'run' ? { headers: { Prefer: 'respond-async' } } : {}),
    });
  const named = options.endpoint ?? endpoint;
  let result = await post(named ?? DEFAULT_ENDPOINT);
  // Most agents answer `run`, so asking first would cost every call a request. One whose manifest
  // names another endpoint refuses `run` with 404 before running anything, naming its own.
  const own = named === undefined ? defaultEndpointOf(result.error) : undefined;
  if (own !== undefined && own !== DEFAULT_ENDPOINT) result = await post(own);
  return result;
}

/**
 * The call's JSON envelope. The route also answers as Server-Sent Events (typed as their events'
 * data in the OpenAPI document's types: CallStreamData), but only to a caller that prefers them by
 * its `Accept`, which this call is not; and 202 with a run (RunStarted), but only to a caller that
 * sends `Prefer: respond-async`, which this call does not: an answer it reads as JSON is the envelope.
 */
function jsonAnswer(answer: CallEnvelope | CallStreamData | RunStarted): CallEnvelope {
  return answer as CallEnvelope;
}
