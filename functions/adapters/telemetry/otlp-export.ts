/**
 * Where the platform's spans go when the operator asks (docs/traces.md, "Exporting"): OTLP over
 * HTTP, protobuf or JSON, through the OpenTelemetry SDK's own exporters and batch span processor.
 * A call never waits for it: an ended span is queued (a bounded queue) and sent in batches in the
 * background; a queue full drops spans, and every span dropped or lost to a failed export is
 * counted (`dropped`) and reported in the log at most once a minute. Loaded only when an exporter is
 * configured (LAZY_MODULES.otlpExport), so no function carries the exporters' code for nothing.
 */
import { createNoopMeter, type Meter, type MeterProvider } from '@opentelemetry/api';
import {
  createOtlpNetworkExportDelegate,
  type IExporterTransport,
  OTLPExporterBase,
} from '@opentelemetry/otlp-exporter-base';
import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
  createOtlpHttpExporterMetrics,
} from '@opentelemetry/otlp-exporter-base/node-http';
import {
  JsonTraceSerializer,
  ProtobufTraceSerializer,
  TraceExporterMetricsHelper,
} from '@opentelemetry/otlp-transformer';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import type { Logger } from '../../shared/logger.ts';

export interface OtlpExportOptions {
  /** The traces endpoint, whole (…/v1/traces). */
  url: string;
  protocol: 'http/protobuf' | 'http/json';
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMillis: number;
  exportTimeoutMillis: number;
  logger: Logger;
  /** Sends the serialized batch another way than plain HTTP (X-Ray's endpoint, signed: xray-transport.ts). */
  transport?: IExporterTransport;
}

const COMPONENT = 'otlp_http_span_exporter';

/** The span processor that exports, and the count of spans it could not. */
export function otlpSpanProcessor(options: OtlpExportOptions): {
  processor: BatchSpanProcessor;
  dropped: () => number;
} {
  const counter = new DroppedSpans(options.logger);
  const processor = new BatchSpanProcessor({
    exporter: otlpExporter(options),
    maxQueueSize: options.maxQueueSize,
    maxExportBatchSize: Math.min(options.maxExportBatchSize, options.maxQueueSize),
    scheduledDelayMillis: options.scheduledDelayMillis,
    exportTimeoutMillis: options.exportTimeoutMillis,
    // The processor's own metrics are where it counts what it drops (a full queue, a failed export).
    selfObsMeterProvider: counter.meterProvider(),
  });
  return { processor, dropped: () => counter.total };
}

function otlpExporter(options: OtlpExportOptions): SpanExporter {
  const json = options.protocol === 'http/json';
  const http = convertLegacyHttpOptions(
    { url: options.url, timeoutMillis: options.exportTimeoutMillis },
    'TRACES',
    'v1/traces',
    { 'Content-Type': json ? 'application/json' : 'application/x-protobuf' },
  );
  const serializer = json ? JsonTraceSerializer : ProtobufTraceSerializer;
  const delegate = options.transport
    ? createOtlpNetworkExportDelegate(
        http,
        serializer,
        createOtlpHttpExporterMetrics(COMPONENT, TraceExporterMetricsHelper, options.url, undefined),
        retrying(options.transport),
      )
    : createOtlpHttpExportDelegate(http, serializer, COMPONENT, TraceExporterMetricsHelper, undefined);
  return new OTLPExporterBase<ReadableSpan[]>(delegate);
}

/**
 * Counts the spans the batch processor reports as processed with an error type (`queue_full`, or a
 * failed export's), through the meter it is given, and logs the count now and then.
 */
class DroppedSpans {
  total = 0;
  private reported = 0;
  private lastLog = 0;
  private readonly logger: Logger;

  constructor(logger: Logger) {
    this.logger = logger;
  }

  meterProvider(): MeterProvider {
    const noop = createNoopMeter();
    const meter: Meter = Object.create(noop);
    meter.createCounter = (name, opts) => {
      if (name !== 'otel.sdk.processor.span.processed') return noop.createCounter(name, opts);
      return {
        add: (count, attributes) => {
          const reason = attributes?.['error.type'];
          if (reason !== undefined) this.add(count, String(reason));
        },
      };
    };
    return { getMeter: () => meter };
  }

  private add(count: number, reason: string): void {
    this.total += count;
    const now = Date.now();
    if (now - this.lastLog < 60_000) return;
    this.lastLog = now;
    this.logger.warn('trace spans dropped', {
      dropped: this.total - this.reported,
      dropped_total: this.total,
      reason,
    });
    this.reported = this.total;
  }
}

/**
 * A transport retried as the SDK's own HTTP transport is (its retrying wrapper is not exported):
 * a retryable answer (throttled, unavailable) is tried again after the delay it asks for, or a
 * growing one, up to four attempts within the export's time.
 */
function retrying(transport: IExporterTransport): IExporterTransport {
  return {
    send: async (data, timeoutMillis) => {
      const deadline = Date.now() + timeoutMillis;
      let result = await transport.send(data, timeoutMillis);
      for (let attempt = 1; attempt < 4 && result.status === 'retryable'; attempt++) {
        const wait = result.retryInMillis ?? 200 * 2 ** attempt * (0.5 + Math.random());
        if (Date.now() + wait >= deadline) break;
        await new Promise((resolve) => setTimeout(resolve, wait));
        result = await transport.send(data, deadline - Date.now());
      }
      return result;
    },
    shutdown: () => transport.shutdown(),
  };
}
