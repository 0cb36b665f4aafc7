/**
 * The tracer of the composition root (deps.ts): the OpenTelemetry SDK's, unless traces are off,
 * with the OTLP exporter behind it when the operator configured one (docs/traces.md, "Exporting"):
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces, as
 * the OpenTelemetry specification reads them; in AWS with `tracing=xray`, X-Ray's OTLP endpoint.
 */
import type { Config } from '../ports/config.ts';
import { offTracer, type Tracer } from '../ports/tracer.ts';
import type { Logger } from '../shared/logger.ts';
import { LAZY_MODULES } from './lazy-modules.ts';

/**
 * The tracer, loaded on first use (`ready`, which core awaits before a call's first span): only the
 * functions that run calls bundle the SDK (lib/lambda-bundling.ts), and only they ever load it.
 */
export function createTracer(config: Config, logger: Logger): Tracer {
  if (config.traces === 'off') return offTracer;
  let loaded: Tracer | undefined;
  let ready: Promise<void> | undefined;
  const real = (): Tracer => {
    if (!loaded) throw new Error('The tracer is used before ready() resolved');
    return loaded;
  };
  return {
    recording: true,
    // Known from the configuration, before the exporter is loaded.
    exporting: exportUrl(config) !== undefined,
    // One promise, loading then settled, for every call (none made a call); a failed load is
    // tried again by the next call.
    ready: () =>
      (ready ??= loadTracer(config, logger).then(
        (tracer) => {
          loaded = tracer;
        },
        (err: unknown) => {
          ready = undefined;
          throw err;
        },
      )),
    startSpan: (name, options) => real().startSpan(name, options),
    parse: (header) => real().parse(header),
    format: (parent) => real().format(parent),
    // Nothing loaded, nothing to send.
    flush: async () => loaded?.flush(),
  };
}

async function loadTracer(config: Config, logger: Logger): Promise<Tracer> {
  const { OtelTracer } = await LAZY_MODULES.otelTracer();
  const url = exportUrl(config);
  if (!url)
    return new OtelTracer({
      serviceName: config.otelServiceName,
      resourceAttributes: config.otelResourceAttributes,
    });
  const { otlpSpanProcessor } = await LAZY_MODULES.otlpExport();
  const xray = config.tracesExport === 'xray';
  const transport = xray
    ? (await LAZY_MODULES.xrayTransport()).xrayTransport(url, config.awsRegion)
    : undefined;
  const { processor } = otlpSpanProcessor({
    url,
    protocol: xray ? 'http/protobuf' : (config.otelTracesProtocol ?? config.otelProtocol ?? 'http/protobuf'),
    maxQueueSize: config.otelBspMaxQueueSize,
    maxExportBatchSize: config.otelBspMaxExportBatchSize,
    scheduledDelayMillis: config.otelBspScheduleDelay,
    exportTimeoutMillis: config.otelBspExportTimeout,
    logger,
    transport,
  });
  return new OtelTracer({
    serviceName: config.otelServiceName,
    resourceAttributes: config.otelResourceAttributes,
    processors: [processor],
  });
}

/** Where spans are exported, if anywhere. */
export function exportUrl(config: Config): string | undefined {
  if (config.tracesExport === 'xray')
    return `https://xray.${config.awsRegion ?? 'us-east-1'}.amazonaws.com/v1/traces`;
  if (config.otelTracesExporter === 'none') return undefined;
  if (config.otelTracesEndpoint) return config.otelTracesEndpoint;
  if (!config.otelEndpoint) return undefined;
  return `${config.otelEndpoint.replace(/\/+$/, '')}/v1/traces`;
}
