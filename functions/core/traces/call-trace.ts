/**
 * One call's trace as it runs (docs/traces.md): its root span, the spans its engine adds under it,
 * and the ended spans it keeps for the call's record. An engine is given the trace with its call
 * (`call.trace`); which span is the parent of the next one follows the work itself inside a
 * managed loop's tool call (an AsyncLocalStorage scope, `within`), so that a sandbox exec or a
 * sub-agent call started there hangs under that tool's span without passing a parent along. The
 * call itself runs in no scope of its own: its spans' default parent is its root, and a scope costs
 * every call a frame and the copies of it each nested scope makes (docs/traces.md, "Cost").
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type EndedSpan,
  offTracer,
  type SpanAttributes,
  type SpanKind,
  type TraceParent,
  type Tracer,
  type TraceSpan,
} from '../../ports/tracer.ts';

/**
 * The most spans, and the most bytes of them, a call keeps with its record (a DynamoDB item holds
 * 400 KB; a span is about 300 bytes). Past either, spans are still exported but not stored, and the
 * record counts them.
 */
export const MAX_STORED_SPANS = 500;
export const MAX_STORED_SPAN_BYTES = 300 * 1024;
/** A span's name at most (a model's name comes from the caller's X-Platform-Model). */
const MAX_NAME = 256;

export class CallTrace {
  readonly tracer: Tracer;
  readonly root: TraceSpan;
  /** Whether its trace id was given (a new trace named by the call's request id), not drawn. */
  readonly namedTrace: boolean;
  /** Ended spans, in the order they ended (the root last). */
  readonly spans: EndedSpan[] = [];
  /** Spans past MAX_STORED_SPANS or MAX_STORED_SPAN_BYTES, not stored. */
  dropped = 0;
  private storedBytes = 0;
  /** Spans started, some since ended (pruned as it grows): the call's end ends the rest (finish). */
  private started: TraceSpan[] = [];
  private prunedAt = PRUNE_FROM;
  /**
   * What every scope of its work names (within): one handle a call, emptied at its end, so that
   * what outlives the call (a socket keeps the async context of its last work) holds no trace.
   */
  private readonly handle: TraceHandle = { trace: this };
  /** Each span's end keeps it (one function a call, not one a span). */
  private readonly keepEnded = (span: EndedSpan): void => this.keep(span);

  constructor(
    tracer: Tracer,
    name: string,
    options: { parent?: TraceParent | undefined; traceId?: string | undefined; startMs: number },
  ) {
    this.tracer = tracer;
    this.root = tracer.startSpan(name, {
      kind: 'server',
      parent: options.parent,
      traceId: options.traceId,
      startMs: options.startMs,
    });
    // The id the root got, checked: a tracer may draw its own (the port's traceId is a wish).
    this.namedTrace =
      options.parent === undefined &&
      options.traceId !== undefined &&
      this.root.context.traceId === options.traceId;
  }

  get traceId(): string {
    return this.root.context.traceId;
  }

  /** The W3C traceparent naming the root span (the call's answer and the sandbox's TRACEPARENT). */
  traceparent(span: TraceSpan = this.root): string {
    return this.tracer.format(span.context);
  }

  /** A span of this call under `parent` (default: the span the current work runs in, or the root). */
  start(
    name: string,
    options: { kind?: SpanKind; attributes?: SpanAttributes; startMs?: number; parent?: TraceParent } = {},
  ): TraceSpan {
    // Work that outlives the call (an engine winding down after the deadline) records nothing: the
    // trace was stored and exported with the call's end, its open spans ended with the call's error.
    if (this.root.ended) return offTracer.startSpan(name, {});
    const span = this.tracer.startSpan(name.length > MAX_NAME ? name.slice(0, MAX_NAME) : name, {
      kind: options.kind,
      attributes: options.attributes,
      startMs: options.startMs,
      parent: options.parent ?? this.parentHere(),
      onEnd: this.keepEnded,
    });
    if (this.started.length >= this.prunedAt) {
      // A long loop starts thousands of spans: those ended need not be held to the call's end.
      this.started = this.started.filter((s) => !s.ended);
      this.prunedAt = Math.max(PRUNE_FROM, this.started.length * 2);
    }
    this.started.push(span);
    return span;
  }

  /**
   * The span the current work runs in, if it is this call's (a tool call's, inside `within`), else
   * the call's own: the parent of a span or sub-call started here. A scope of another call (an
   * in-process sub-call runs inside its orchestrator's tool scope) is not this call's.
   */
  parentHere(): TraceParent {
    return this.scopeHere() ?? this.root.context;
  }

  /** The span the current work runs in when it is this call's (a tool call's), else undefined. */
  scopeHere(): TraceParent | undefined {
    const s = scope.getStore();
    return s !== undefined && s.handle.trace === this ? s.parent : undefined;
  }

  /** Runs `work` with `span` as the parent of the spans it starts. */
  within<T>(span: TraceSpan, work: () => T): T {
    return scope.run({ handle: this.handle, parent: span.context }, work);
  }

  /**
   * Ends the root span with the call's error, if it failed (its outcome's attributes, where they are
   * kept or exported, are set on the root before: call-report.ts). A call stopped at its deadline,
   * or by its caller, answers before its engine has wound down: what it still had open (the
   * sandbox, a command, a model request) ends here with the call's error, so the stored trace shows
   * where the time went.
   */
  finish(error: string | undefined): void {
    // Whatever still holds the call's scope lets go of its trace: a socket keeps the async context
    // of the last work done on it, which held every span of the call long enough for V8 to promote
    // them (docs/traces.md, "Cost").
    this.handle.trace = undefined;
    const unfinished = { error: error ?? 'UNFINISHED', endMs: Date.now() };
    // A span ended already is left as it was (end is once).
    for (const span of this.started) if (!span.ended) span.end(unfinished);
    // The call's own span is kept whatever the count: every reader sees at least it.
    const root = this.root.end({ error });
    if (root) this.spans.push(root);
  }

  /** Keeps an ended span with the call's record, within the stored bounds. */
  private keep(span: EndedSpan): void {
    const bytes = approximateBytes(span);
    if (this.spans.length < MAX_STORED_SPANS && this.storedBytes + bytes <= MAX_STORED_SPAN_BYTES) {
      this.spans.push(span);
      this.storedBytes += bytes;
    } else this.dropped++;
  }
}

/** How many started spans a call holds before it first lets go of those ended. */
const PRUNE_FROM = 64;

interface TraceHandle {
  /** Undefined once the call has ended. */
  trace: CallTrace | undefined;
}

interface Scope {
  handle: TraceHandle;
  parent: TraceParent;
}

const scope = new AsyncLocalStorage<Scope>();

/**
 * Runs `work` inside a span of the call's trace named `name`, ended with its outcome (`error` from
 * `failed` when it returns normally but failed, or from what it throws). Without a trace (tracing
 * off) it just runs `work`.
 */
export async function traced<T>(
  trace: CallTrace | undefined,
  name: string,
  options: { kind?: SpanKind; attributes?: SpanAttributes },
  work: (span: TraceSpan | undefined) => Promise<T>,
  failed?: (result: T) => string | undefined,
): Promise<T> {
  // After the call's end (an engine winding down) its trace records nothing.
  if (!trace?.tracer.recording || trace.root.ended) return work(undefined);
  const span = trace.start(name, options);
  try {
    const result = await trace.within(span, () => work(span));
    span.end({ error: failed?.(result) });
    return result;
  } catch (err) {
    span.end({ error: errorCode(err) });
    throw err;
  }
}

/** An error's code for a span's status: the platform's code, or the error's class name. */
export function errorCode(err: unknown): string {
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'string') return err.code;
  return err instanceof Error ? err.name : 'Error';
}

/** About what a span takes stored (names and values, with room for the fixed fields): no JSON built. */
function approximateBytes(span: EndedSpan): number {
  let bytes = 200 + span.name.length;
  const list = span.attributes;
  for (let i = 0; i + 1 < list.length; i += 2) {
    const value = list[i + 1];
    bytes += (list[i] as string).length + 8 + (typeof value === 'string' ? value.length : 16);
  }
  return bytes;
}
