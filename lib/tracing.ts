/**
 * `cdk deploy -c tracing=…` (docs/deploy.md, "Traces to X-Ray"): where the platform's own spans go
 * besides each call's record. `off`, the default, exports none and leaves the template as it was;
 * `xray` sends them from every platform function to X-Ray's OTLP endpoint in the region, signed
 * with the function's role (functions/adapters/telemetry/xray-transport.ts).
 */

/** The values of `-c tracing=…`, the default first. */
export const TRACING_MODES = ['off', 'xray'] as const;
export type TracingMode = (typeof TRACING_MODES)[number];

/**
 * What a function's role needs to write spans to X-Ray's OTLP endpoint, besides what Lambda's active
 * tracing already grants it (xray:PutTraceSegments, xray:PutTelemetryRecords): the spans, and their
 * indexing as trace summaries (Transaction Search indexes a share of them). IAM grants these on
 * Resource "*" only.
 */
export const XRAY_SPAN_ACTIONS = ['xray:PutSpans', 'xray:PutSpansForIndexing'] as const;

/** `-c tracing=…` as given (absent or empty: off), or an error that stops the synthesis, naming the values. */
export function tracingMode(given: string | undefined): TracingMode {
  if (given === undefined || given === '') return 'off';
  const mode = TRACING_MODES.find((m) => m === given);
  if (!mode) {
    throw new Error(
      `tracing must be one of ${TRACING_MODES.map((m) => `"${m}"`).join(', ')} (-c tracing=xray); got "${given}"`,
    );
  }
  return mode;
}
