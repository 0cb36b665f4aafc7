/**
 * A stored span's attributes (trace-record.ts): name and value in turn, the names the platform sets
 * by their number in ATTRIBUTE_NAMES, and left out what the line or the call's record already says
 * (read back by trace-from-record.ts). Their bytes are much of what a stored trace costs
 * (docs/traces.md, "Cost").
 */
import type { SpanValue } from '../../ports/tracer.ts';
import { type CallOfLine, saidByRecord } from './trace-from-record.ts';

/**
 * The attribute names the platform sets, stored as their position here. Append only: a stored line
 * names them by number, so a name once listed keeps its place for the 30 days lines live. A name not
 * listed is stored as itself.
 */
const ATTRIBUTE_NAMES = [
  'agenthost.endpoint',
  'agenthost.outcome',
  'http.response.status_code',
  'error.type',
  'agenthost.credits',
  'agenthost.compute_ms',
  'agenthost.quota',
  'gen_ai.operation.name',
  'gen_ai.provider.name',
  'gen_ai.request.model',
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.output_tokens',
  'gen_ai.response.finish_reasons',
  'agenthost.time_to_first_token_ms',
  'gen_ai.tool.name',
  'gen_ai.agent.name',
  'agenthost.sandbox.kind',
  'agenthost.timed_out',
  'process.executable.name',
  'process.exit.code',
  'process.exit.signal',
  'agenthost.cpu_ms',
  'agenthost.db',
  'agenthost.workspace.id',
  'agenthost.service.id',
  'agenthost.service.restart_failures',
  'agenthost.service.restart_delay_ms',
  'service.crash_loop',
  'service.name',
] as const;
const ATTRIBUTE_CODES = new Map<string, number>(ATTRIBUTE_NAMES.map((name, i) => [name, i]));

/**
 * The attributes whose value is a list of strings (OpenTelemetry's conventions say which). One of a
 * single string, the usual case, is stored as that string (the bytes a line was before they were
 * lists) and read back as a list, which also reads lines written before as lists.
 */
const LIST_ATTRIBUTES = new Set<string>(['gen_ai.response.finish_reasons']);

/**
 * Attributes set only for an exporter (Tracer.exporting), which reads a span alone, and not stored:
 * the stored trace is the same, and costs the same, with or without one (docs/traces.md, "Cost").
 * The HTTP request of the call route's span (its method, route and URL: the same for every call
 * but the path, which the agent and endpoint say) and a model answer's id and model.
 */
const EXPORTED_ONLY = new Set<string>([
  'http.request.method',
  'http.route',
  'url.path',
  'url.scheme',
  'gen_ai.response.id',
  'gen_ai.response.model',
]);

/** The root span's attributes the trace's own fields hold (not stored twice). */
const ROOT_FROM_FIELDS = new Set(['agenthost.request_id', 'agenthost.agent', 'agenthost.agent.id']);

/**
 * Name and value in turn, a known name by its number; left out, what the line holds (the root's
 * request id and agent), what only an exporter reads (when spans are `exported`) and, given the
 * `record` that alone reads the line, what it says: the root's endpoint and outcome, a model
 * request's provider and model when they are the call's.
 */
export function compactAttributes(
  attributes: readonly SpanValue[],
  said: 'root' | 'model' | 'other',
  record: CallOfLine | undefined,
  exported: boolean,
): SpanValue[] {
  // Its size known: no growing as it fills (cut after, for the left-out names).
  const out: SpanValue[] = new Array(attributes.length);
  let n = 0;
  for (let i = 0; i + 1 < attributes.length; i += 2) {
    const name = attributes[i] as string;
    const value = attributes[i + 1] as SpanValue;
    if (said === 'root' && ROOT_FROM_FIELDS.has(name)) continue;
    if (exported && EXPORTED_ONLY.has(name)) continue;
    if (record && saidByRecord(name, value, said, record)) continue;
    out[n++] = ATTRIBUTE_CODES.get(name) ?? name;
    out[n++] = typeof value === 'object' && value.length === 1 ? (value[0] as string) : value;
  }
  out.length = n;
  return out;
}

export function expandAttributes(packed: SpanValue[]): Record<string, SpanValue> {
  const out: Record<string, SpanValue> = {};
  for (let i = 0; i + 1 < packed.length; i += 2) {
    const key = packed[i];
    const name = typeof key === 'number' ? ATTRIBUTE_NAMES[key] : key;
    if (typeof name !== 'string') continue;
    const value = packed[i + 1] as SpanValue;
    out[name] = typeof value === 'string' && LIST_ATTRIBUTES.has(name) ? [value] : value;
  }
  return out;
}
