/**
 * The Tracer port in the OpenTelemetry model: W3C trace context read and written by the
 * OpenTelemetry SDK's own propagation code, spans recorded as plain objects, and, when the operator
 * configured an exporter, each ended span handed to the SDK's span processor (its batch processor
 * and OTLP exporter: otlp-export.ts) as the ReadableSpan the SDK exports.
 *
 * Why not the SDK's own Tracer: the platform keeps every call's spans (sampled always), and side by
 * side in `npm run bench:calls` the SDK's spans (their context objects, attribute cleaning, limits
 * and self-metrics, then the conversion back to what core stores) were most of what tracing cost
 * in all, many times what these cost (docs/traces.md, "Cost"). What leaves the platform is unchanged: the SDK's
 * processor, exporter, resource and wire format.
 */
import { randomFillSync } from 'node:crypto';
import { type SpanContext, SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { millisToHrTime, parseTraceParent } from '@opentelemetry/core';
import { defaultResource, type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import platformPackage from '../../../package.json' with { type: 'json' };
import type {
  EndedSpan,
  SpanKind as PortSpanKind,
  SpanAttributes,
  SpanOptions,
  SpanValue,
  TraceParent,
  Tracer,
  TraceSpan,
} from '../../ports/tracer.ts';

const KINDS = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL } as const;
/** An attribute value at most (a caller's model name is one): longer ones are cut. */
const MAX_VALUE = 256;
/** Strings a list value keeps at most (a finish reason per answer: one, for a platform that asks for one). */
const MAX_LIST = 16;
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
  readonly exporting: boolean;
  ready = async (): Promise<void> => undefined;
  private readonly processors: SpanProcessor[];
  private readonly resource: Resource;

  constructor(options: OtelTracerOptions) {
    this.processors = options.processors ?? [];
    this.exporting = this.processors.length > 0;
    // The SDK's own resource says which SDK (telemetry.sdk.name, .language, .version: the exporter's,
    // which puts the spans on the wire); service.version is the platform's release.
    this.resource = defaultResource().merge(
      resourceFromAttributes({
        'service.name': options.serviceName,
        'service.version': platformPackage.version,
        ...options.resourceAttributes,
      }),
    );
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
  ended(span: EndedSpan): void {
    if (this.processors.length === 0) return;
    const readable = toReadable(span, this.resource);
    for (const processor of this.processors) processor.onEnd(readable);
  }

  /** Sends what the exporter still holds (a Lambda invocation's end, the process's). */
  async flush(): Promise<void> {
    await Promise.all(this.processors.map((p) => p.forceFlush().catch(() => undefined)));
  }
}

const NO_ATTRIBUTES: readonly SpanValue[] = Object.freeze([]);

/**
 * A span as it runs and, once ended, as it is handed back (EndedSpan): one object a span, its
 * attributes a list of name and value in turn.
 */
class RecordedSpan implements TraceSpan, EndedSpan, TraceParent {
  readonly traceId: string;
  readonly spanId: string;
  readonly name: string;
  readonly kind: PortSpanKind;
  readonly parentSpanId: string | null;
  readonly startMs: number;
  /** None yet: one list shared by every span without attributes (a call's own span, mostly). */
  attributes: readonly SpanValue[] = NO_ATTRIBUTES;
  durationMs = 0;
  status: 'ok' | 'error' = 'ok';
  ended = false;
  private readonly tracer: OtelTracer;
  /** Let go of once called: a scope that outlives the call may name this span, not its call. */
  private onEnd: ((span: EndedSpan) => void) | undefined;

  constructor(tracer: OtelTracer, name: string, options: SpanOptions) {
    this.tracer = tracer;
    this.onEnd = options.onEnd;
    this.name = name;
    this.kind = options.kind ?? 'internal';
    this.parentSpanId = options.parent?.spanId ?? null;
    this.startMs = options.startMs ?? nowMs();
    this.traceId = options.parent?.traceId ?? options.traceId ?? randomHex(16);
    this.spanId = randomHex(8);
    if (options.attributes) this.set(options.attributes);
  }

  /** Its ids are its own fields: no object of them a span (every call starts a few). */
  get context(): TraceParent {
    return this;
  }

  set(attributes: SpanAttributes): void {
    for (const key in attributes) this.setAttribute(key, attributes[key]);
  }

  setAttribute(name: string, value: SpanValue | undefined): void {
    // Neither JSON nor OTLP holds NaN or Infinity (a stored one would read back as null).
    if (this.ended || value === undefined || (typeof value === 'number' && !Number.isFinite(value))) return;
    const kept =
      typeof value === 'string'
        ? value.length > MAX_VALUE
          ? value.slice(0, MAX_VALUE)
          : value
        : typeof value === 'object'
          ? value.slice(0, MAX_LIST).map((v) => (v.length > MAX_VALUE ? v.slice(0, MAX_VALUE) : v))
          : value;
    let list = this.attributes as SpanValue[];
    if (list === NO_ATTRIBUTES) {
      list = [name, kept];
      this.attributes = list;
      return;
    }
    // A few names a span: a look along the list costs less than an object's property by name.
    for (let i = 0; i < list.length; i += 2)
      if (list[i] === name) {
        list[i + 1] = kept;
        return;
      }
    if (list.length < MAX_ATTRIBUTES * 2) list.push(name, kept);
  }

  end(outcome: { error?: string | undefined; endMs?: number } = {}): EndedSpan | null {
    if (this.ended) return null;
    if (outcome.error) {
      this.setAttribute('error.type', outcome.error);
      this.status = 'error';
    }
    const endMs = Math.max(outcome.endMs ?? nowMs(), this.startMs);
    this.durationMs = Math.round((endMs - this.startMs) * 1000) / 1000;
    this.ended = true;
    this.tracer.ended(this);
    const onEnd = this.onEnd;
    this.onEnd = undefined;
    onEnd?.(this);
    return this;
  }
}

/** When the process's monotonic clock began, epoch ms (a constant; its getter allocates). */
const TIME_ORIGIN = performance.timeOrigin;

/** Epoch ms with the monotonic clock's sub-millisecond part (durations of well under a ms show). */
function nowMs(): number {
  return TIME_ORIGIN + performance.now();
}

/** The span as the SDK's exporters read it (its ReadableSpan), made only when one is configured. */
function toReadable(span: EndedSpan, resource: Resource): ReadableSpan {
  const { traceId } = span.context;
  const context: SpanContext = { traceId, spanId: span.context.spanId, traceFlags: TraceFlags.SAMPLED };
  const attributes: Record<string, SpanValue> = {};
  for (let i = 0; i + 1 < span.attributes.length; i += 2)
    attributes[span.attributes[i] as string] = span.attributes[i + 1] as SpanValue;
  return {
    name: span.name,
    kind: KINDS[span.kind],
    spanContext: () => context,
    ...(span.parentSpanId
      ? {
          parentSpanContext: {
            traceId,
            spanId: span.parentSpanId,
            traceFlags: TraceFlags.SAMPLED,
            isRemote: true,
          },
        }
      : {}),
    startTime: millisToHrTime(span.startMs),
    endTime: millisToHrTime(span.startMs + span.durationMs),
    duration: millisToHrTime(span.durationMs),
    status:
      span.status === 'error'
        ? { code: SpanStatusCode.ERROR, message: String(attributes['error.type'] ?? '') }
        : { code: SpanStatusCode.UNSET },
    attributes,
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
