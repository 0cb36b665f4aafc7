/**
 * A call's record: what it will say, gathered while the call runs (outcome, the engine's usage and
 * logs, the credits billed, the concurrency slot to release, the clean-ups to run), and the
 * writing of it when the call ends, whatever its outcome.
 */
import { randomUUID } from 'node:crypto';
import type { CoreDeps } from '../../ports/core-deps.ts';
import type { Item } from '../../ports/store.ts';
import { PlatformError } from '../../shared/errors.ts';
import { isoString, parseIsoTime } from '../../shared/iso-time.ts';
import { agentKeys } from '../agents/agent-keys.ts';
import { type InterruptedCallFields, settleOp } from '../billing/ledger.ts';
import { ROOT_OUTCOME, recordedRootValue } from '../traces/trace-from-record.ts';
import { agentRef, callLineSk, readByRecordAlone, writeTraceOnLine } from '../traces/trace-record.ts';
import { type CallRecord, callRecordItem } from '../usage/call-records.ts';
import type { CallBasis, CallEvents, EngineOutcome } from './call-context.ts';
import { type LineContent, outlineOf } from './call-log-lines.ts';
import { timedByRequestId } from './call-time.ts';
import { ComputeMeter } from './compute-meter.ts';
import { heldSlots } from './held-slots.ts';
import type { Admission } from './quotas.ts';
import { TokenMeter } from './token-meter.ts';

type Outcome = { status: CallRecord['status']; code: string | null; http: number };
type EngineUsage = Pick<EngineOutcome, 'provider' | 'model' | 'usage' | 'computeMs' | 'logs'>;

export class CallReport {
  outcome: Outcome = { status: 'success', code: null, http: 200 };
  engine: EngineUsage = {
    provider: null,
    model: null,
    usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    computeMs: 0,
    logs: [],
  };
  /** Credits this call is billed (a paid agent's charge, unless refunded or owed back). */
  billed = 0;
  /** The concurrency slot, released with the record (calls with a run's service key have none). */
  admission: Admission | undefined;
  /**
   * How the agent's owners see the engine's lines: whole for a call on their own workspace's vault,
   * else only their outlines (call-log-lines.ts). Settled when the call ends.
   */
  content: LineContent = 'outline';
  /** The slot outlives the record: released once the answer is delivered (holdSlotUntilDelivered). */
  private slotKept = false;
  /** The call's run was handed to the run worker (handOver): its record is the worker's to write. */
  private handedOver = false;
  /** Settles once the call has ended and its record's write has settled. */
  private readonly ended: Promise<void>;
  private markEnded!: () => void;
  /** The run's sandbox time as it goes, for a call that ends before its engine reports it. */
  readonly meter = new ComputeMeter();
  /** The model's tokens as they go, likewise. */
  readonly tokens = new TokenMeter();
  /**
   * Some of the agent's output went toward the caller (a streamed call's `delta`): the call is
   * billed however it ends (docs/billing.md, "The caller gone").
   */
  delivered = false;
  private readonly closers: (() => Promise<void>)[] = [];
  readonly call: CallBasis;

  constructor(call: CallBasis) {
    this.call = call;
    this.ended = new Promise((resolve) => {
      this.markEnded = resolve;
    });
  }

  /** Runs `close` when the call ends (the latest registered first); its failure is ignored. */
  onEnd(close: (() => Promise<void>) | undefined): void {
    if (close) this.closers.unshift(close);
  }

  /**
   * A streamed call's slot is held until its answer has been delivered or its client is gone, not
   * only until the call ends: its last events may still wait for the client, and a client that
   * does not read must not hold more streams than its concurrency. The host runs the
   * release (`onDelivered`), after the record has been written.
   */
  holdSlotUntilDelivered(onDelivered: (run: () => Promise<void>) => void): void {
    const admission = this.admission;
    if (!admission) return;
    this.slotKept = true;
    onDelivered(async () => {
      await this.ended;
      await admission.release();
    });
  }

  /**
   * The call's run went to the run worker (core/runs/run-hand-over.ts): it writes no record here,
   * and leaves its slot held (the worker holds it again under the same lease) and its charge
   * pending (settled with the worker's record). This process only stops ordering its search by it.
   */
  handOver(): void {
    this.handedOver = true;
    const lease = this.admission?.lease;
    if (lease) heldSlots.release(this.call.auth.accountId, lease.slot);
  }

  /** The engine's run, as the record keeps it. */
  ran(result: EngineOutcome): void {
    const { provider, model, usage, computeMs, logs } = result;
    this.engine = { provider, model, usage, computeMs, logs };
  }

  /**
   * `events` (a streamed call's, as opened), noting when any of the agent's output is written toward
   * the caller: a non-empty `delta`, or a `step`, handed to the answer's stream while the caller is
   * still there (once it has gone, the stream takes nothing more: streamed-call.ts). A step counts:
   * which tools the model called, in what order, is its work, and carries an answer as well as words
   * do (a caller's input can ask for "list_files if yes, read_file if no"). Once the call has failed
   * nothing more goes out: its refund was decided on what had been sent (an engine still winding down
   * after its deadline could otherwise send text the caller gets free).
   */
  delivering(events: CallEvents): CallEvents {
    const gone = this.call.request.signal;
    const sending = () => this.outcome.status === 'success';
    return {
      delta: async (text) => {
        if (!sending()) return;
        if (text && !gone?.aborted) this.delivered = true;
        await events.delta(text);
      },
      step: async (step) => {
        if (!sending()) return;
        if (!gone?.aborted) this.delivered = true;
        await events.step(step);
      },
    };
  }

  /** The call failed with `err`; returns its error code. */
  failed(err: unknown): string {
    // Sandbox engines attach their run time and redacted log lines to the errors they throw; a
    // call stopped at its deadline has only the meter's count (the engine's comes too late).
    const extra = err as { computeMs?: number; logs?: EngineOutcome['logs'] };
    this.engine.computeMs = typeof extra.computeMs === 'number' ? extra.computeMs : this.meter.ms;
    if (Array.isArray(extra.logs)) this.engine.logs = extra.logs;
    // The tokens the model used before the call ended (an engine's usage comes with its success only).
    const used = this.tokens.usage;
    if (used.total_tokens > 0) {
      this.engine.provider = this.tokens.provider;
      this.engine.model = this.tokens.model;
      this.engine.usage = used;
    }
    const code = err instanceof PlatformError ? err.code : 'INTERNAL_ERROR';
    this.outcome = {
      status: code === 'TIMEOUT' ? 'timeout' : 'error',
      code,
      http: err instanceof PlatformError ? err.status : 500,
    };
    return code;
  }

  /**
   * Runs the clean-ups, then writes the record: before the answer, unless the host takes the
   * record's write as work the answer need not wait for (`waitUntil`); either way its write is
   * requested before this returns.
   */
  async end(deps: CoreDeps, waitUntil?: (work: Promise<void>) => void): Promise<void> {
    try {
      for (const close of this.closers) await close().catch(() => undefined);
      // Only a call with lines of its engine's needs to know (a sandboxed run has looked it up already).
      if (this.engine.logs.length > 0 && (await this.call.vault.isAgentWorkspace(deps)))
        this.content = 'whole';
    } finally {
      const recorded = this.handedOver ? Promise.resolve() : recordCall(deps, this, this.slotKept);
      void recorded.then(this.markEnded);
      if (waitUntil) waitUntil(recorded);
      else await recorded;
    }
  }
}

/** Who called what: the part of a call record known before the call runs (kept by a charge too). */
export function callIdentity(call: CallBasis): InterruptedCallFields {
  return {
    at: call.at,
    caller_key_id: call.auth.keyId,
    tenant: call.tenant,
    agent_id: call.agent.id,
    org: call.agent.org,
    agent: call.agent.name,
    version: call.agent.version,
    workspace_id: call.agent.workspace_id,
    endpoint: call.request.endpoint,
  };
}

/**
 * Writes the call's record; never throws. Its write is requested before the first await, so a host
 * that answers before it settles (waitUntil) finds it already requested of the store.
 */
async function recordCall(deps: CoreDeps, report: CallReport, keepSlot: boolean): Promise<void> {
  try {
    await writeRecord(deps, report, keepSlot);
  } catch (err) {
    // A failed record must not turn the caller's answer into an error.
    deps.logger.error('call record not written', {
      request_id: report.call.request.requestId,
      error: String(err),
    });
  }
}

async function writeRecord(deps: CoreDeps, report: CallReport, keepSlot: boolean): Promise<void> {
  const { call, outcome, engine } = report;
  const { agent } = call;
  const requestId = call.request.requestId;
  const duration = Date.now() - call.startedMs;
  const ok = outcome.status === 'success';
  const fields: CallRecord = {
    ...callIdentity(call),
    request_id: requestId,
    caller_account_id: call.auth.accountId,
    status: outcome.status,
    error_code: outcome.code,
    http_status: outcome.http,
    duration_ms: duration,
    provider: engine.provider,
    model: engine.model,
    ...engine.usage,
    compute_ms: engine.computeMs,
    credits: report.billed,
  };
  const record = callRecordItem(fields);
  // The charge is settled in the same transaction as the record: a call whose answer was written
  // is always billed; one that never got here is refunded by reconciliation.
  const settle = report.billed > 0 ? [settleOp(requestId)] : [];
  // Log lines carry the time they are written (the call's end), not its start: a reader following
  // the log (`agenthost logs --follow`) then sees a long call's lines after the ones already shown.
  const written = isoString(deps.clock.now());
  // The call's own line is keyed by its request id: one line a call, found from its record
  // (trace-record.ts, "Where a trace is").
  const log: Item = {
    ...agentKeys.version(agent.id),
    sk: callLineSk(written, requestId),
    timestamp: written,
    level: ok ? 'info' : 'error',
    message: ok
      ? `call ${requestId} succeeded in ${duration} ms${engineSummary(engine)}`
      : `call ${requestId} failed with ${outcome.code} after ${duration} ms`,
    request_id: requestId,
    ttl: Math.floor(parseIsoTime(call.at) / 1000) + 30 * 86_400,
  };
  // On AWS, API Gateway's own id beside the platform's: its access log knows the request by it.
  if (call.request.gatewayRequestId) log.gateway_request_id = call.request.gatewayRequestId;
  // The call's trace rides on its line (trace-record.ts): no item of its own to write. A call whose
  // record is found from its request id (its time is the id's) links the line from the record;
  // another's line is indexed by the id (GSI2).
  const linked = timedByRequestId(call.at, requestId);
  if (traceOnLine(log, report, fields, !linked) && linked) record.log_at = written;
  // A call from outside the agent's workspace leaves its owners the outline of each line, never its
  // content: what is not stored, no reader (the log page, --follow, the dashboard) can show.
  const whole = report.content === 'whole';
  const extraLogs = engine.logs.map((l, i) => ({
    ...agentKeys.version(agent.id),
    sk: `${agentKeys.logPrefix}${written}#${String(i + 1).padStart(2, '0')}#${randomUUID()}`,
    timestamp: written,
    level: l.level,
    message: whole ? l.message : outlineOf(l),
    request_id: requestId,
    caller_account_id: call.auth.accountId,
    content: report.content,
    ttl: log.ttl,
  }));
  // The lines before the record that points to its line (log_at): written each on its own when
  // nothing is settled (quotas.ts), a record found always finds its line.
  const items = [log, ...extraLogs, record];
  // Admitted calls release their concurrency slot in the same transaction (a streamed call's once
  // its answer is delivered: CallReport.holdSlotUntilDelivered).
  if (report.admission) await report.admission.finish(items, settle, keepSlot);
  else await deps.store.transactWrite([...items.map((item) => ({ put: item })), ...settle]);
}

/**
 * Ends the call's root span with its outcome, and writes the trace on the call's log line (indexed
 * by its request id when `indexed`); whether the call had a trace. On
 * the line, not an item of its own: side by side in `npm run bench:calls`, a row more per call cost
 * the local store more than all the spans. It cannot cost the call its record: its spans are
 * bounded in number and bytes, its names and values in length (call-trace.ts), so the line stays
 * well under an item's 400 KB.
 */
function traceOnLine(line: Item, report: CallReport, record: CallRecord, indexed: boolean): boolean {
  const { call, outcome } = report;
  const trace = call.trace;
  if (!trace) return false;
  const { agent } = call;
  const requestId = call.request.requestId;
  const ref = agentRef(agent.org, agent.name, agent.version);
  const parentRequestId = call.auth.service?.run_id ?? null;
  // The call's own span says who called which agent with what outcome. Its stored trace leaves out
  // what the line's fields say, and, when the record alone reads the line, what the record says
  // (trace-from-record.ts), and reads them back: they are set only where they are kept, or for an
  // exporter, which reads the span alone (docs/traces.md, "Cost").
  const root = trace.root;
  const exporting = trace.tracer.exporting;
  if (exporting) {
    root.setAttribute('agenthost.request_id', requestId);
    root.setAttribute('agenthost.agent', ref);
    root.setAttribute('agenthost.agent.id', agent.id);
  }
  if (exporting || !readByRecordAlone(indexed, parentRequestId)) {
    root.setAttribute('agenthost.endpoint', call.request.endpoint);
    // The call's outcome as its record says it (the one mapping, which reading the line undoes).
    for (const name of ROOT_OUTCOME) root.setAttribute(name, recordedRootValue(name, record));
  }
  trace.finish(outcome.code ?? undefined);
  writeTraceOnLine(line, {
    trace_id: trace.traceId,
    request_id: requestId,
    parent_request_id: parentRequestId,
    at: call.at,
    agent_id: agent.id,
    agent_ref: ref,
    workspace_id: agent.workspace_id,
    caller_account_id: call.auth.accountId,
    root_span_id: root.context.spanId,
    spans: trace.spans,
    dropped_spans: trace.dropped,
    indexed,
    traced_by_request_id: trace.namedTrace,
    record,
    exported: exporting,
  });
  return true;
}

/**
 * What ran, for the success line: the model and its tokens when one answered, the sandbox's time
 * when code ran; a tool has no model, so naming one (`null/null, 0 tokens`) would mislead.
 */
function engineSummary(engine: EngineUsage): string {
  const parts: string[] = [];
  if (engine.provider)
    parts.push(`${engine.provider}/${engine.model ?? 'default'}`, `${engine.usage.total_tokens} tokens`);
  if (engine.computeMs > 0) parts.push(`${Math.round(engine.computeMs)} ms of compute`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}
