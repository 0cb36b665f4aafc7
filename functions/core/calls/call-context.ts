/**
 * What a call carries through the gateway: the request, the caller (whose AuthContext holds, for
 * a sub-call, its run credential's hops, deadline, budget and strictness), the agent version, when
 * it began, its deadline and its price; and what an engine is given (an orchestrator's run extras
 * included) and gives back. The gateway
 * builds it step by step (gateway.ts); the engines, orchestration and billing steps read it.
 */
import type { Readable } from 'node:stream';
import type { RunSteps } from '../../ports/run-steps.ts';
import type { TraceParent } from '../../ports/tracer.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import type { Warning } from '../agents/manifest.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import type { CallTrace } from '../traces/call-trace.ts';
import type { CallInput } from './call-input.ts';
import type { CallLogLine } from './call-log-lines.ts';
import type { CallOptions } from './call-options.ts';
import type { CallVault } from './call-vault.ts';
import type { ComputeMeter } from './compute-meter.ts';
import type { Deadline } from './deadline.ts';
import type { TokenMeter } from './token-meter.ts';

export interface CallRequest {
  org: string;
  agent: string;
  version: string;
  endpoint: string;
  /** A stream from HTTP (read once, multipart files spooled to disk), or a Buffer from the platform. */
  body: Buffer | Readable;
  contentType: string | undefined;
  headers: (name: string) => string | undefined;
  requestId: string;
  /**
   * API Gateway's own id of the HTTP request the call came in (on AWS): written beside the
   * platform's on the call's log line, so an operator finds the request in API Gateway's access log.
   */
  gatewayRequestId?: string | undefined;
  /**
   * The host's waitUntil: takes the call's record (`work`, which never rejects) as work the answer
   * need not wait for; whether the answer goes out first is the host's choice. Absent, the call
   * waits for its record before answering (docs/calls.md, "The answer and the record").
   */
  waitUntil?: ((work: Promise<void>) => void) | undefined;
  /**
   * The host runs `run` once the answer has been delivered whole or its client is gone (and sees it
   * through): a streamed call holds its concurrency slot until then, not only until it ends, so an
   * account cannot hold more unread streams than its concurrency (docs/calls.md, "Streamed calls").
   * Absent, the slot is released with the call's record.
   */
  onDelivered?: ((run: () => Promise<void>) => void) | undefined;
  /**
   * The caller keeps the whole output itself (a schedule run stores it with its record), so an
   * output too large to answer inline is not turned into a download link (payloads/output-answer.ts).
   */
  wholeOutput?: true;
  /**
   * A streamed call (docs/calls.md, "Streamed calls"): the gateway opens it once the call is
   * admitted, charged and about to run, and the engine reports to what it returns. Whatever fails
   * before that is an ordinary answer.
   */
  stream?: CallStream | undefined;
  /** Aborted when the caller is gone (a streamed call's client hung up): the call ends at once. */
  signal?: AbortSignal | undefined;
  /**
   * A run (`Prefer: respond-async`, or an MCP task; docs/runs.md): its deadline is a run's, by the
   * agent's run_timeout_seconds and the caller's tier (deadline.ts callSeconds), not a streamed call's.
   * Its caller sets it where the run's call is made, a run carried on after a restart included.
   */
  run?: boolean | undefined;
  /**
   * A run's steps (ports/run-steps.ts; docs/runs.md, "Carried on"): its input, admission, charge
   * and engine's steps are recorded there, and a replay of the call reads back those it finished.
   */
  steps?: RunSteps | undefined;
  /**
   * The span an in-process sub-call hangs under (a managed loop's tool span, when the loop calls a
   * dependency on the platform's side); HTTP callers send a `traceparent` header instead.
   */
  traceParent?: TraceParent | undefined;
  /**
   * The HTTP request the call is, for its span's HTTP server attributes (OpenTelemetry's
   * conventions: call-trace-start.ts). Given by the call route alone, and only when spans are
   * exported: nothing stores them. A call through MCP, a schedule or an orchestrator has none.
   */
  http?: CallHttpRequest | undefined;
}

export interface CallHttpRequest {
  method: string;
  /** The route's template (`/{org}/{agent}/{version}/{endpoint}`). */
  route: string;
  path: string;
  /** As the client sent it: the platform's public URL's. */
  scheme: string;
}

/**
 * Where a streamed call's events go, from the moment the call runs; or where a run started without
 * waiting (`Prefer: respond-async`) is answered from, which takes no events (docs/runs.md).
 */
export interface CallStream {
  /**
   * `headers`: the answer's own (a deprecated version's Deprecation, Sunset and Link, X-Trace-Id);
   * `call`: the call as it is about to run. Undefined: the engine reports nothing as it goes. A
   * promise: the call runs once it settles, and fails (before it runs) if it rejects.
   */
  open(
    headers: Record<string, string>,
    call: CallContext,
  ): CallEvents | undefined | Promise<CallEvents | undefined>;
}

/**
 * What an engine reports while it runs (redacted like logs by whoever sends them on). Each report
 * resolves once the caller has taken it: an engine awaits it before reading more of its model's
 * stream, so a caller that stops reading pauses the model instead of piling up events.
 */
export interface CallEvents {
  /** Text as the model writes it (a prompt agent's answer; a managed loop's final answer). */
  delta(text: string): Promise<void>;
  /** A managed loop's tool call or sub-agent call, once it ended. */
  step(step: CallStep): Promise<void>;
}

export interface CallStep {
  kind: 'tool' | 'agent';
  /** The tool's name, or the called agent's `org/name/version`. */
  name: string;
  outcome: 'ok' | 'error';
  duration_ms: number;
}

export interface CallResponse {
  body: {
    data: Record<string, unknown>;
    warnings: Warning[];
    metadata: { processing_time_ms: number; version: string; trace_id?: string };
  };
  headers: Record<string, string>;
}

/** A call whose agent is known: who calls what, and when. Every such call is recorded. */
export interface CallBasis {
  auth: AuthContext;
  request: CallRequest;
  agent: AgentVersion;
  /** When the call began, on the platform clock (ISO): the time of its record and logs. */
  at: string;
  /** When the call began, on the process clock (epoch ms): its duration is measured from it. */
  startedMs: number;
  /** X-Platform-Tenant, as the record keeps it. */
  tenant: string | null;
  /** The call's trace (absent when tracing is off): stored with its record. */
  trace?: CallTrace | undefined;
  /** Whose vault the call runs on, and so whose its output is (looked up once, when needed). */
  vault: CallVault;
}

/** A call ready to run: its deadline (the sub-call limits applied) and what the caller pays. */
export interface CallContext extends CallBasis {
  deadline: Deadline;
  /** Credits per call (0: free, or the caller belongs to the agent's workspace). */
  price: number;
}

/** What an engine runs: the call's validated input and files, the caller's options, the deadline's signal. */
export interface EngineRun extends Pick<CallInput, 'input' | 'files' | 'metadata'> {
  options: CallOptions;
  /** Aborted at the call's deadline. */
  signal: AbortSignal;
  /** What an orchestrator's run gets on top (service key, network, strict mode, dependency calls). */
  extras?: RunExtras | undefined;
  /** Counts the run's sandbox time as its commands run (the call's record reads it at a timeout). */
  meter?: ComputeMeter | undefined;
  /** Counts the model's tokens as they come (the record of a call cut off mid-answer reads it). */
  tokens?: TokenMeter | undefined;
  /** A streamed call's events (CallRequest.stream, opened). */
  events?: CallEvents | undefined;
  /**
   * A run's steps (ports/run-steps.ts): a managed loop's model requests and tool calls are
   * recorded there, and a replayed run's finished ones are read back, not run again. Absent: run
   * once, recorded nowhere.
   */
  steps?: RunSteps | undefined;
}

/**
 * What an orchestrator run gets on top of an ordinary one: PLATFORM_SERVICE_KEY and
 * PLATFORM_API_URL in its environment, network to reach the platform, and strict mode when its
 * parent (or itself) is strict.
 */
export interface RunExtras {
  env?: Record<string, string>;
  network?: 'none' | 'egress';
  /** With egress: host loopback ports the run may reach (the platform's own, when its URL is local). */
  hostLoopbackPorts?: number[];
  strict?: boolean;
  /** How many sub-calls the run has made with its service key so far. */
  subCalls?: () => Promise<number>;
  /**
   * Calls one of the orchestrator's dependencies on the platform's side, with the run's service key
   * (hops, deadline, budget, strict): what a dependency's matching custom tool does. Returns the
   * text the model sees (the callee's data and warnings, or its error).
   */
  callDependency?: (
    dependency: { id: string; version: string },
    input: Record<string, unknown>,
    /** The orchestrator's run's signal: the sub-call ends when the run does (its deadline, a cancel). */
    signal?: AbortSignal,
  ) => Promise<string>;
}

/** What any engine's run comes to, as the response and the call record need it. */
export interface EngineOutcome {
  data: Record<string, unknown>;
  warnings: Warning[];
  provider: string | null;
  model: string | null;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
  computeMs: number;
  /** The engine's own lines, each with its outline (call-log-lines.ts). */
  logs: CallLogLine[];
}
