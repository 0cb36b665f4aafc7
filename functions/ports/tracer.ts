/**
 * The Tracer port: spans in the OpenTelemetry model (W3C trace context), as core records them for
 * every call (docs/traces.md). The adapter (adapters/telemetry/otel-tracer.ts) builds them with the
 * OpenTelemetry SDK's own tracer and, when the operator configured an exporter, hands each ended
 * span to it; core keeps the ended spans it is given back to store them with the call's record.
 * A tracer that is off (PLATFORM_TRACES=off) starts spans that record nothing.
 */

/** Where a span hangs in a trace: its trace and its parent span (W3C `traceparent`'s two ids). */
export interface TraceParent {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** 16 lowercase hex digits. */
  spanId: string;
}

export type SpanKind = 'server' | 'client' | 'internal';
/** A string list is for the conventions that call for one (`gen_ai.response.finish_reasons`). */
export type SpanValue = string | number | boolean | string[];
/** Attributes to set; an undefined value is left out. */
export type SpanAttributes = Record<string, SpanValue | undefined>;

/** A finished span as stored and served (GET /agents/{id}/calls/{request_id}/trace). */
export interface StoredSpan {
  span_id: string;
  /** Null for a trace's root span. */
  parent_span_id: string | null;
  name: string;
  kind: SpanKind;
  /** When it started, epoch ms (with the monotonic clock's fraction). */
  start_ms: number;
  /** With microsecond precision. */
  duration_ms: number;
  status: 'ok' | 'error';
  attributes: Record<string, SpanValue>;
}

/**
 * A span once ended, as the tracer hands it back (a call keeps it to store: trace-record.ts) and to
 * the exporter. The span itself, not a copy, and its attributes a list of name and value in turn,
 * not an object: every call records a few, and an object a span more, with properties set by name,
 * showed in the instructions a traced call costs (docs/traces.md, "Cost").
 */
export interface EndedSpan {
  readonly context: TraceParent;
  /** Null for a trace's root span. */
  readonly parentSpanId: string | null;
  readonly name: string;
  readonly kind: SpanKind;
  /** When it started, epoch ms (with the monotonic clock's fraction). */
  readonly startMs: number;
  /** With microsecond precision. */
  readonly durationMs: number;
  readonly status: 'ok' | 'error';
  /** Name and value in turn, each name once, in the order first set. */
  readonly attributes: readonly SpanValue[];
}

export interface SpanOptions {
  /** The parent (another span of this process, or a remote one); none: a new trace. */
  parent?: TraceParent | undefined;
  /** A new trace's id (no parent), when the caller has one for it; default random. */
  traceId?: string | undefined;
  kind?: SpanKind | undefined;
  attributes?: SpanAttributes | undefined;
  /** Epoch ms (process clock) it started at, when it is recorded after the fact; default now. */
  startMs?: number | undefined;
  /** Called once, as it ends (a call keeps its spans so: call-trace.ts). */
  onEnd?: ((span: EndedSpan) => void) | undefined;
}

export interface TraceSpan {
  /** Its ids: what a child names as its parent, and what `traceparent` carries. */
  readonly context: TraceParent;
  /** Whether it has ended (attributes set after are ignored). */
  readonly ended: boolean;
  set(attributes: SpanAttributes): void;
  /** One attribute (no object to build for it); an undefined value is left out. */
  setAttribute(name: string, value: SpanValue | undefined): void;
  /**
   * Ends it (at `endMs`, process clock, or now) and returns it ended; `error` marks it failed with
   * that error code. Null when it had ended already (a second end changes nothing) or the tracer
   * records nothing.
   */
  end(outcome?: { error?: string | undefined; endMs?: number }): EndedSpan | null;
}

export interface Tracer {
  /** False when tracing is off: spans are started but nothing is recorded, stored or exported. */
  readonly recording: boolean;
  /**
   * Whether ended spans leave the process (an exporter is configured). When none does, what only an
   * exporter would read need not be recorded: the call's own span's attributes that its stored
   * trace leaves out and reads back from its record (call-report.ts; docs/traces.md, "Cost").
   */
  readonly exporting: boolean;
  /**
   * Loads what the tracer runs on (the SDK, the exporter): awaited before a call's first span, so
   * that functions that never trace never load it. Cheap once done.
   */
  ready(): Promise<void>;
  startSpan(name: string, options: SpanOptions): TraceSpan;
  /** The parent a `traceparent` header names, or undefined when it is absent or malformed. */
  parse(traceparent: string | undefined): TraceParent | undefined;
  /** The `traceparent` header (or TRACEPARENT variable) naming `parent`, sampled. */
  format(parent: TraceParent): string;
  /**
   * Sends what the exporter still holds: at the end of each Lambda invocation (a frozen function
   * sends nothing), never on a call's path. Never rejects.
   */
  flush(): Promise<void>;
}

/** The tracer when tracing is off (PLATFORM_TRACES=off), and where nothing traces: records nothing. */
export const offTracer: Tracer = {
  recording: false,
  exporting: false,
  ready: async () => undefined,
  startSpan: () => ({
    context: { traceId: '0'.repeat(32), spanId: '0'.repeat(16) },
    ended: false,
    set: () => undefined,
    setAttribute: () => undefined,
    end: () => null,
  }),
  parse: () => undefined,
  format: (p) => `00-${p.traceId}-${p.spanId}-01`,
  flush: async () => undefined,
};
