/**
 * The Tracer port in the OpenTelemetry model: W3C trace context read and written by the
 * OpenTelemetry SDK's own propagation code, spans recorded as plain objects, and, when the operator
 * configured an exporter, each ended span handed to the SDK's span processor (its batch processor
 * and OTLP exporter: otlp-export.ts) as the ReadableSpan the SDK exports.
 *
 * Why not the SDK's own Tracer: the platform keeps every call's spans (sampled always), and side by
 * side in `npm run bench:calls` the SDK's spans (their context objects, attribute cleaning, limits
 * and self-metrics, then the conversion back to what core stores) cost about 40 µs a call, most of
 * what tracing cost in all; these cost a few. What leaves the platform is unchanged: the SDK's
 * processor, exporter, resource and wire format.
 */
import { randomFillSync } from 'node:crypto';
import { type HrTime, type SpanContext, SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { millisToHrTime, parseTraceParent } from '@opentelemetry/core';
import { type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import type {
  SpanKind as PortSpanKind,
  SpanAttributes,
  SpanOptions,
  SpanValue,
  StoredSpan,
  TraceParent,
  Tracer,
  TraceSpan,
} from '../../ports/tracer.ts';

const KINDS = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL } as const;
/** An attribute value at most (a caller's model name is one): longer ones are cut. */
const MAX_VALUE = 256;
/** Attributes a span keeps at most. */
const MAX_ATTRIBUTES = 64;
const SCOPE = { name: 'agenthost' };

export interface OtelTracerOptions {
  /** service.name of the spans' resource (OTEL_SERVICE_NAME). */
  serviceName: string;
  /** Extra resource attributes (OTEL_RESOURCE_ATTRIBUTES, parsed). */
  resourceAttributes?: Record<string, string>;
  /** Where ended spans go besides core (the exporter's batch processor). */
  processors?: SpanProcessor[];
}

export class OtelTracer implements Tracer {
  readonly recording = true;
  ready = async (): Promise<void> => undefined;
  private readonly processors: SpanProcessor[];
  private readonly resource: Resource;

  constructor(options: OtelTracerOptions) {
    this.processors = options.processors ?? [];
    this.resource = resourceFromAttributes({
      'service.name': options.serviceName,
      ...options.resourceAttributes,
    });
  }

  startSpan(name: string, options: SpanOptions): TraceSpan {
    return new RecordedSpan(this, name, options);
  }

  parse(traceparent: string | undefined): TraceParent | undefined {
    if (!traceparent) return undefined;
    const context = parseTraceParent(traceparent.trim());
    if (!context || /^0+$/.test(context.traceId) || /^0+$/.test(context.spanId)) return undefined;
    return { traceId: context.traceId, spanId: context.spanId };
  }

  format(parent: TraceParent): string {
    return `00-${parent.traceId}-${parent.spanId}-01`;
  }

  /** Hands an ended span to the exporter's processor, when there is one. */
  ended(span: StoredSpan, traceId: string): void {
    if (this.processors.length === 0) return;
    const readable = toReadable(span, traceId, this.resource);
    for (const processor of this.processors) processor.onEnd(readable);
  }

  /** Sends what the exporter still holds (a Lambda invocation's end, the process's). */
  async flush(): Promise<void> {
    await Promise.all(this.processors.map((p) => p.forceFlush().catch(() => undefined)));
  }
}

class RecordedSpan implements TraceSpan {
  readonly context: TraceParent;
  private readonly tracer: OtelTracer;
  private readonly name: string;
  private readonly kind: PortSpanKind;
  private readonly parentSpanId: string | null;
  private readonly startMs: number;
  private readonly attributes: Record<string, SpanValue> = {};
  private count = 0;

  constructor(tracer: OtelTracer, name: string, options: SpanOptions) {
    this.tracer = tracer;
    this.name = name;
    this.kind = options.kind ?? 'internal';
    this.parentSpanId = options.parent?.spanId ?? null;
    this.startMs = options.startMs ?? nowMs();
    this.context = { traceId: options.parent?.traceId ?? randomHex(16), spanId: randomHex(8) };
    if (options.attributes) this.set(options.attributes);
  }

  set(attributes: SpanAttributes): void {
    for (const key in attributes) {
      const value = attributes[key];
      // Neither JSON nor OTLP holds NaN or Infinity (a stored one would read back as null).
      if (value === undefined || (typeof value === 'number' && !Number.isFinite(value))) continue;
      if (!(key in this.attributes)) {
        if (this.count >= MAX_ATTRIBUTES) continue;
        this.count++;
      }
      this.attributes[key] =
        typeof value === 'string' && value.length > MAX_VALUE ? value.slice(0, MAX_VALUE) : value;
    }
  }

  end(outcome: { error?: string | undefined; endMs?: number } = {}): StoredSpan {
    if (outcome.error) this.set({ 'error.type': outcome.error });
    const endMs = Math.max(outcome.endMs ?? nowMs(), this.startMs);
    const span: StoredSpan = {
      span_id: this.context.spanId,
      parent_span_id: this.parentSpanId,
      name: this.name,
      kind: this.kind,
      start_ms: this.startMs,
      duration_ms: Math.round((endMs - this.startMs) * 1000) / 1000,
      status: outcome.error ? 'error' : 'ok',
      attributes: this.attributes,
    };
    this.tracer.ended(span, this.context.traceId);
    return span;
  }
}

/** When the process's monotonic clock began, epoch ms (a constant; its getter allocates). */
const TIME_ORIGIN = performance.timeOrigin;

/** Epoch ms with the monotonic clock's sub-millisecond part (durations of well under a ms show). */
function nowMs(): number {
  return TIME_ORIGIN + performance.now();
}

/** The span as the SDK's exporters read it (its ReadableSpan), made only when one is configured. */
function toReadable(span: StoredSpan, traceId: string, resource: Resource): ReadableSpan {
  const startMs = span.start_ms;
  const context: SpanContext = { traceId, spanId: span.span_id, traceFlags: TraceFlags.SAMPLED };
  const duration: HrTime = millisToHrTime(span.duration_ms);
  const startTime = millisToHrTime(startMs);
  return {
    name: span.name,
    kind: KINDS[span.kind],
    spanContext: () => context,
    ...(span.parent_span_id
      ? {
          parentSpanContext: {
            traceId,
            spanId: span.parent_span_id,
            traceFlags: TraceFlags.SAMPLED,
            isRemote: true,
          },
        }
      : {}),
    startTime,
    endTime: millisToHrTime(startMs + span.duration_ms),
    duration,
    status:
      span.status === 'error'
        ? { code: SpanStatusCode.ERROR, message: String(span.attributes['error.type'] ?? '') }
        : { code: SpanStatusCode.UNSET },
    attributes: span.attributes,
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/**
 * Random ids from a pooled buffer turned into hex once per 4 KB (a crypto call, or a hex encoding,
 * per span id would cost more than the span).
 */
let hexPool = '';
let offset = 0;
function randomHex(bytes: number): string {
  if (offset + bytes * 2 > hexPool.length) {
    hexPool = randomFillSync(Buffer.alloc(4096)).toString('hex');
    offset = 0;
  }
  const hex = hexPool.slice(offset, offset + bytes * 2);
  offset += bytes * 2;
  return hex;
}
