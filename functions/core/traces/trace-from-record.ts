/**
 * What a call's stored trace leaves out when only the call's record reads its line (trace-record.ts;
 * docs/traces.md, "Cost"): the record, written in the same transaction, already says who called
 * which agent, with what outcome, and the model it used, so the spans need not say them again. One
 * mapping both ways: the call's own span's outcome is set from the record's fields with it where a
 * line keeps it or an exporter reads it (call-report.ts), writing leaves out what equals it, and
 * reading puts it back.
 */
import type { SpanValue } from '../../ports/tracer.ts';
import type { CallRecord } from '../usage/call-records.ts';

/**
 * What the call's record says of a line it links, which the line leaves out when the record alone
 * reads it: who called which agent, with what outcome and model.
 */
export type CallOfLine = Pick<
  CallRecord,
  | 'org'
  | 'agent'
  | 'version'
  | 'workspace_id'
  | 'caller_account_id'
  | 'endpoint'
  | 'status'
  | 'http_status'
  | 'error_code'
  | 'credits'
  | 'compute_ms'
  | 'provider'
  | 'model'
>;

/**
 * The call's outcome as its own span says it, set from its record's fields as it ends where a line
 * keeps it or an exporter reads it (call-report.ts).
 */
export const ROOT_OUTCOME = [
  'agenthost.outcome',
  'http.response.status_code',
  'agenthost.credits',
  'agenthost.compute_ms',
] as const;

/** Every attribute of the call's own span its record holds: its endpoint, its outcome, its error. */
const ROOT_FROM_RECORD = ['agenthost.endpoint', ...ROOT_OUTCOME, 'error.type'] as const;

/**
 * The value the call's record gives the call's own span's attribute `name` (undefined: none), the
 * one mapping both ways: the root's outcome is set from the record's fields with it, a line its
 * record alone reads leaves out what equals it, and reading puts it back.
 */
export function recordedRootValue(name: string, record: CallOfLine): SpanValue | undefined {
  switch (name) {
    case 'agenthost.endpoint':
      return record.endpoint;
    case 'agenthost.outcome':
      return record.status;
    case 'http.response.status_code':
      return record.http_status;
    case 'agenthost.credits':
      return record.credits || undefined;
    case 'agenthost.compute_ms':
      return record.compute_ms !== undefined && record.compute_ms > 0
        ? Math.round(record.compute_ms)
        : undefined;
    case 'error.type':
      return record.error_code ?? undefined;
    default:
      return undefined;
  }
}

/** A model request span's (model-spans.ts) names of its model, which the call's record says too. */
const OPERATION = 'gen_ai.operation.name';
const PROVIDER = 'gen_ai.provider.name';
const MODEL = 'gen_ai.request.model';
const CHAT = 'chat';

/** Whether `name` is a model request span's for `model` (`chat <model>`: model-spans.ts), unbuilt. */
export function isChatName(name: string, model: string | null): boolean {
  return (
    model !== null && name.length === model.length + 5 && name.startsWith('chat ') && name.endsWith(model)
  );
}

/**
 * Whether a span's attributes (name and value in turn) are a model request's: its operation `chat`.
 * A tool call's span names its operation too (`execute_tool`, `invoke_agent`: tool-spans.ts), but no
 * model.
 */
export function isModelRequest(attributes: readonly SpanValue[]): boolean {
  for (let i = 0; i + 1 < attributes.length; i += 2)
    if (attributes[i] === OPERATION) return attributes[i + 1] === CHAT;
  return false;
}

/** Whether the record gives back this attribute of the call's own span, or of a model request's, as it is (fromRecord). */
export function saidByRecord(
  name: string,
  value: SpanValue,
  span: 'root' | 'model' | 'other',
  record: CallOfLine,
): boolean {
  if (span === 'root') return value === recordedRootValue(name, record);
  if (span === 'other') return false;
  return (name === PROVIDER && value === record.provider) || (name === MODEL && value === record.model);
}

/** Puts back what a line its record alone reads left out (saidByRecord). */
export function fromRecord(attributes: Record<string, SpanValue>, root: boolean, record: CallOfLine): void {
  if (root) {
    for (const name of ROOT_FROM_RECORD) {
      const value = recordedRootValue(name, record);
      if (value !== undefined && !(name in attributes)) attributes[name] = value;
    }
  } else if (attributes[OPERATION] === CHAT) {
    if (record.provider !== null && !(PROVIDER in attributes)) attributes[PROVIDER] = record.provider;
    if (record.model !== null && !(MODEL in attributes)) attributes[MODEL] = record.model;
  }
}

/** A model request span's name (`chat <model>`) read back from its model. */
export function chatName(attributes: Record<string, SpanValue>): string {
  return `chat ${attributes[MODEL] ?? ''}`;
}
