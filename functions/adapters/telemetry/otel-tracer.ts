/**
 * The Tracer port on the OpenTelemetry SDK for Node (@opentelemetry/sdk-trace): spans are the SDK's
 * own, sampled always (the platform keeps every call's trace, whatever a caller's traceparent
 * flags say), their ids its random ids. An ended span is handed to the span processors the
 * composition root gave (the OTLP exporter's batch processor, when the operator configured one:
 * otlp-export.ts) and returned to core as a StoredSpan, which core keeps with the call's record.
 */
import {
  type Attributes,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { hrTimeToMilliseconds, parseTraceParent } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  type ReadableSpan,
  type SpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type {
  SpanAttributes,
  SpanOptions,
  StoredSpan,
  TraceParent,
  Tracer,
  TraceSpan,
} from '../../ports/tracer.ts';

const KINDS = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL } as const;
const KIND_NAMES = ['internal', 'server', 'client', 'internal', 'internal'] as const;

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
  private readonly tracer;
  ready = async (): Promise<void> => undefined;
  private readonly provider: TracerProvider;

  constructor(options: OtelTracerOptions) {
    this.provider = new TracerProvider({
      sampler: new AlwaysOnSampler(),
      resource: resourceFromAttributes({
        'service.name': options.serviceName,
        ...options.resourceAttributes,
      }),
      spanProcessors: options.processors ?? [],
      // Every attribute a call stores is bounded: a long value (a caller's model name) is cut.
      spanLimits: { attributeValueLengthLimit: 256, attributeCountLimit: 64 },
    });
    this.tracer = this.provider.getTracer('agenthost');
  }

  startSpan(name: string, options: SpanOptions): TraceSpan {
    const parent = options.parent
      ? trace.setSpanContext(ROOT_CONTEXT, {
          traceId: options.parent.traceId,
          spanId: options.parent.spanId,
          traceFlags: TraceFlags.SAMPLED,
          isRemote: true,
        })
      : ROOT_CONTEXT;
    const span = this.tracer.startSpan(
      name,
      {
        kind: KINDS[options.kind ?? 'internal'],
        attributes: defined(options.attributes),
        ...(options.startMs === undefined ? {} : { startTime: new Date(options.startMs) }),
      },
      parent,
    );
    return new OtelSpan(span);
  }

  parse(traceparent: string | undefined): TraceParent | undefined {
    if (!traceparent) return undefined;
    const context = parseTraceParent(traceparent.trim());
    if (!context || !trace.isSpanContextValid(context)) return undefined;
    return { traceId: context.traceId, spanId: context.spanId };
  }

  format(parent: TraceParent): string {
    return `00-${parent.traceId}-${parent.spanId}-01`;
  }

  /** Sends what the exporter still holds (a Lambda invocation's end, the process's). */
  async flush(): Promise<void> {
    await this.provider.forceFlush().catch(() => undefined);
  }

  async shutdown(): Promise<void> {
    await this.provider.shutdown();
  }
}

class OtelSpan implements TraceSpan {
  readonly context: TraceParent;
  private readonly span: Span;

  constructor(span: Span) {
    this.span = span;
    const { traceId, spanId } = span.spanContext();
    this.context = { traceId, spanId };
  }

  set(attributes: SpanAttributes): void {
    this.span.setAttributes(defined(attributes));
  }

  end(outcome: { error?: string | undefined; endMs?: number } = {}): StoredSpan {
    if (outcome.error) {
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error });
      this.span.setAttribute('error.type', outcome.error);
    }
    this.span.end(outcome.endMs === undefined ? undefined : new Date(outcome.endMs));
    return stored(this.span as unknown as ReadableSpan);
  }
}

function stored(span: ReadableSpan): StoredSpan {
  return {
    span_id: span.spanContext().spanId,
    parent_span_id: span.parentSpanContext?.spanId ?? null,
    name: span.name,
    kind: KIND_NAMES[span.kind] ?? 'internal',
    start_time: new Date(hrTimeToMilliseconds(span.startTime)).toISOString(),
    duration_ms: Math.round(hrTimeToMilliseconds(span.duration) * 1000) / 1000,
    status: span.status.code === SpanStatusCode.ERROR ? 'error' : 'ok',
    attributes: span.attributes as StoredSpan['attributes'],
  };
}

function defined(attributes: SpanAttributes | undefined): Attributes {
  const out: Attributes = {};
  if (attributes) for (const [k, v] of Object.entries(attributes)) if (v !== undefined) out[k] = v;
  return out;
}
