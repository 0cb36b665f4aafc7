import * as z from 'zod';
import { csv, int, url } from './setting-types.ts';

/**
 * The trace settings of the configuration schema (config.ts spreads them in; each is named in
 * shared/env-names.ts like every other). Traces (docs/traces.md): every call's spans are kept with
 * its record unless `traces` is off (then calls carry no trace id). Where they are exported: the
 * standard OTEL_* variables (an OTLP endpoint; OTEL_TRACES_EXPORTER=none stops it), or in AWS
 * `xray` (set by the stack from `-c tracing=xray`): X-Ray's own OTLP endpoint in the function's
 * region, requests signed with its role.
 */
export const traceSettings = {
  traces: z.enum(['on', 'off']).default('on'),
  tracesExport: z.enum(['otlp', 'xray']).default('otlp'),
  otelTracesExporter: z.enum(['otlp', 'none']).default('otlp'),
  otelEndpoint: url(),
  otelTracesEndpoint: url(),
  otelProtocol: z.enum(['http/protobuf', 'http/json']).optional(),
  otelTracesProtocol: z.enum(['http/protobuf', 'http/json']).optional(),
  otelServiceName: z.string().min(1).max(200).default('agenthost'),
  // key=value,key=value (W3C Baggage's encoding, as the OpenTelemetry SDKs read it).
  otelResourceAttributes: z
    .string()
    .optional()
    .transform((v) =>
      Object.fromEntries(
        csv(v)
          .map((pair) => pair.split('=').map((part) => decodeURIComponent(part.trim())))
          .filter((kv): kv is [string, string] => kv.length === 2 && kv[0] !== ''),
      ),
    ),
  // The export queue (the OpenTelemetry SDK's batch span processor): spans past the queue's size are
  // dropped and counted, never waited for.
  otelBspMaxQueueSize: int(1, 1_000_000).default(2048),
  otelBspMaxExportBatchSize: int(1, 1_000_000).default(512),
  otelBspScheduleDelay: int(0, 3_600_000).default(5000),
  otelBspExportTimeout: int(1, 3_600_000).default(30_000),
};
