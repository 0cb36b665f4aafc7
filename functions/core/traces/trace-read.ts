/**
 * GET /agents/{id}/calls/{request_id}/trace: a call's trace as its reader may see it
 * (docs/traces.md, "Who sees what"). The tree is the call and the sub-calls its runs made, linked
 * by the platform's own parent links (trace-record.ts). Each call of it is shown whole to the owners
 * of its agent's workspace; a call whose parent its reader sees whole (or the call asked for, to
 * its caller) is shown in outline: its own call span and admission, with its timing and outcome,
 * and none of its engine's spans (commands, tools, models, prompts) or sub-calls, which are counted
 * as hidden. A reader who is neither the call's caller nor an owner of its agent's workspace gets
 * 404, as for a call that does not exist.
 */
import type { CoreDeps } from '../../ports/core-deps.ts';
import { queryAll } from '../../ports/store.ts';
import type { StoredSpan } from '../../ports/tracer.ts';
import { notFound } from '../../shared/errors.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { memberEntity, memberKeys } from '../workspaces/member-record.ts';
import { loadTrace } from './trace-lookup.ts';
import { type CallTraceRecord, traceKeys, traceOfItem } from './trace-record.ts';
import type { TraceView, TraceViewSpan } from './trace-schemas.ts';

/** The spans of a call shown in outline, and the attributes of its call span that show. */
const OUTLINE_SPANS = new Set(['admission']);
const OUTLINE_ATTRIBUTES = new Set([
  'agenthost.request_id',
  'agenthost.agent',
  'agenthost.outcome',
  'agenthost.credits',
  'http.response.status_code',
  'error.type',
  'agenthost.quota',
]);

/** How deep a tree of sub-calls is read: above any hop limit a manifest may set. */
const MAX_DEPTH = 16;

export async function readCallTrace(
  deps: CoreDeps,
  auth: AuthContext,
  agentId: string,
  requestId: string,
): Promise<TraceView> {
  const root = await loadTrace(deps, requestId, { caller: auth.accountId, agentId });
  if (!root || root.agent_id !== agentId) throw notFound('Trace');
  const owner = ownerCheck(deps, auth.accountId);
  const rootWhole = await owner(root.workspace_id);
  if (!rootWhole && !(await mayOutline(deps, auth.accountId, root, owner))) throw notFound('Trace');

  const view: TraceView = {
    trace_id: root.trace_id,
    request_id: root.request_id,
    spans: [],
    hidden_spans: 0,
    dropped_spans: 0,
  };
  let level: { record: CallTraceRecord; whole: boolean }[] = [{ record: root, whole: rootWhole }];
  for (let depth = 0; level.length > 0 && depth < MAX_DEPTH; depth++) {
    const next: typeof level = [];
    for (const { record, whole } of level) {
      view.dropped_spans += record.dropped_spans;
      if (!whole) {
        show(view, record, outline(record), false);
        // Its sub-calls are its engine's doing: hidden with it.
        view.hidden_spans += await countBelow(deps, record.request_id, depth);
        continue;
      }
      show(view, record, record.spans, true);
      for (const child of await childrenOf(deps, record.request_id))
        next.push({ record: child, whole: await owner(child.workspace_id) });
    }
    level = next;
  }
  view.spans.sort((a, b) => a.start_time.localeCompare(b.start_time) || order(a) - order(b));
  return view;
}

/**
 * Whether a reader who does not own the call's agent may still see it in outline: its caller, for a
 * call made directly; for a sub-call (made with a run's credential on the top caller's account),
 * only an owner of the orchestrator's workspace, who sees the orchestrator whole: a public agent's
 * own sub-calls are its internals, whoever paid for the top call.
 */
async function mayOutline(
  deps: CoreDeps,
  accountId: string,
  record: CallTraceRecord,
  owner: (workspaceId: string) => Promise<boolean>,
): Promise<boolean> {
  if (!record.parent_request_id) return record.caller_account_id === accountId;
  const parent = await loadTrace(deps, record.parent_request_id, { caller: record.caller_account_id });
  return parent !== undefined && (await owner(parent.workspace_id));
}

async function childrenOf(deps: CoreDeps, requestId: string): Promise<CallTraceRecord[]> {
  const items = await queryAll(deps.store, { index: 'gsi1', pk: traceKeys.children(requestId) });
  return items.map((item) => traceOfItem(item)).filter((t) => t !== undefined);
}

/** The spans under a call hidden with it: its sub-calls' spans, all the way down. */
async function countBelow(deps: CoreDeps, requestId: string, depth: number): Promise<number> {
  if (depth >= MAX_DEPTH) return 0;
  let count = 0;
  for (const child of await childrenOf(deps, requestId))
    count += child.spans.length + (await countBelow(deps, child.request_id, depth + 1));
  return count;
}

/** Whether the reader owns a workspace (memoized for one read). */
function ownerCheck(deps: CoreDeps, accountId: string): (workspaceId: string) => Promise<boolean> {
  const seen = new Map<string, Promise<boolean>>();
  return (workspaceId) => {
    let known = seen.get(workspaceId);
    if (!known) {
      known = deps.store
        .get(memberKeys.member(workspaceId, accountId))
        .then((item) => (item ? memberEntity.fromItem(item).role === 'owner' : false));
      seen.set(workspaceId, known);
    }
    return known;
  };
}

/** A call seen from outside its agent's workspace: its call span and admission, the rest counted. */
function outline(record: CallTraceRecord): StoredSpan[] {
  return record.spans.filter((s) => s.span_id === record.root_span_id || OUTLINE_SPANS.has(s.name));
}

function show(view: TraceView, record: CallTraceRecord, spans: StoredSpan[], whole: boolean): void {
  view.hidden_spans += record.spans.length - spans.length;
  for (const span of spans) view.spans.push(toView(record, span, whole));
}

function toView(record: CallTraceRecord, span: StoredSpan, whole: boolean): TraceViewSpan {
  const attributes = whole
    ? span.attributes
    : Object.fromEntries(Object.entries(span.attributes).filter(([k]) => OUTLINE_ATTRIBUTES.has(k)));
  const { start_ms, ...rest } = span;
  return {
    ...rest,
    start_time: new Date(start_ms).toISOString(),
    attributes,
    request_id: record.request_id,
    agent: record.agent_ref,
    visibility: whole ? 'whole' : 'outline',
  };
}

/** Within one millisecond, a call before what it started (the ISO time has no finer part). */
function order(span: TraceViewSpan): number {
  return span.kind === 'server' ? 0 : 1;
}
