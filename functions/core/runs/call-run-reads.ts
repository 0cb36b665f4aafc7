import type { CoreDeps } from '../../ports/core-deps.ts';
import { ERROR_CODES, PlatformError } from '../../shared/errors.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import {
  answerStoredOutput,
  OUTPUT_AS_URL,
  outputAsUrlWarning,
  outputLink,
} from '../payloads/output-answer.ts';
import { type CallRunRecord, callRunEntity, callRunKeys } from './call-run-record.ts';
import type { RunDocument, RunList, RunListQuery } from './call-run-schemas.ts';

/*
 * GET /runs/{run_id} and GET /runs: the caller's own runs, read under its account (a run of
 * another account is not there to find: 404), each as the run document (docs/runs.md).
 */

/**
 * A run still running this long past its deadline was interrupted: the process that ran it stopped
 * (a restart of `npm start`, a Lambda that failed) before it could end it. Its record is answered as
 * failed; a paid call's charge is refunded by the ledger's reconciliation, as any interrupted call's.
 */
export const INTERRUPTED_AFTER_MS = 60_000;

/** Runs a list request reads at most, filters and all, before it answers a shorter page. */
const MAX_SCANNED = 1000;

export async function getRun(deps: CoreDeps, auth: AuthContext, runId: string): Promise<RunDocument> {
  return withOutput(deps, describeRun(await findRun(deps, auth, runId)));
}

/**
 * The caller's run as it is now (one left running past its deadline: failed, interrupted), its
 * stored output not read; 404 for a run of any other account, as for one that does not exist.
 */
export async function findRun(deps: CoreDeps, auth: AuthContext, runId: string): Promise<CallRunRecord> {
  const item = await deps.store.get({ pk: callRunKeys.ofAccount(auth.accountId), sk: callRunKeys.sk(runId) });
  if (!item) throw new PlatformError('NOT_FOUND', `Run ${runId} not found`);
  return seen(deps, callRunEntity.fromItem(item));
}

export async function listRuns(deps: CoreDeps, auth: AuthContext, query: RunListQuery): Promise<RunList> {
  const runs: RunDocument[] = [];
  const filtered = query.status !== undefined || query.agent !== undefined;
  let scanned = 0;
  /** The id of the last run looked at: where a page that stopped short goes on from. */
  let lastSeen: string | undefined;
  let cursor: string | undefined;
  let more = true;
  const pk = callRunKeys.ofAccount(auth.accountId);
  const sk = query.cursor ? { lt: callRunKeys.sk(query.cursor) } : { beginsWith: callRunKeys.sk('') };
  while (more && runs.length < query.limit && scanned < MAX_SCANNED) {
    const page = await deps.store.query({
      pk,
      sk,
      reverse: true,
      // Filtered, most runs read may be skipped: read them by the hundred, not by the page's size.
      limit: filtered ? SCAN_PAGE : query.limit,
      ...(cursor ? { cursor } : {}),
    });
    cursor = page.cursor;
    more = cursor !== undefined;
    for (const [i, item] of page.items.entries()) {
      scanned++;
      const record = callRunEntity.fromItem(item);
      lastSeen = record.run_id;
      if (runs.length < query.limit && matches(deps, record, query))
        runs.push(describeRun(seen(deps, record)));
      if (runs.length === query.limit) {
        // Full: more follow if this page or the partition has more.
        more = more || i < page.items.length - 1;
        break;
      }
    }
  }
  // More may follow: a page that filled, or a scan that stopped before the partition's end, goes on
  // after the last run it looked at (which is the page's last one when it filled).
  const next = more && lastSeen ? lastSeen : null;
  return { runs: await Promise.all(runs.map((run) => withOutput(deps, run))), next_cursor: next };
}

/** Runs a filtered list reads a store page. */
const SCAN_PAGE = 100;

function matches(deps: CoreDeps, record: CallRunRecord, query: RunListQuery): boolean {
  if (query.agent && record.agent !== query.agent && !record.agent.startsWith(`${query.agent}/`))
    return false;
  return !query.status || seen(deps, record).status === query.status;
}

/** The run as it is answered now: an interrupted one as it ended (interrupted, below). */
function seen(deps: CoreDeps, record: CallRunRecord): CallRunRecord {
  return interrupted(deps, record) ?? record;
}

/** A run as its document says it, its stored output not read (`output_ref` still beside it). */
export function describeRun(
  record: CallRunRecord,
): RunDocument & { output_ref?: CallRunRecord['output_ref'] } {
  return {
    run_id: record.run_id,
    status: record.status,
    agent: record.agent,
    agent_id: record.agent_id,
    endpoint: record.endpoint,
    request_id: record.request_id,
    trace_id: record.trace_id,
    created_at: record.created_at,
    started_at: record.started_at,
    ended_at: record.ended_at,
    deadline_at: record.deadline_at,
    duration_ms:
      record.ended_at === null ? null : Date.parse(record.ended_at) - Date.parse(record.created_at),
    cancel_requested_at: record.cancel_requested_at,
    webhook: record.webhook_url === null ? null : { url: withoutQuery(record.webhook_url) },
    result:
      record.result_status === null || record.result_body === null
        ? null
        : { status: record.result_status, body: record.result_body },
    ...(record.output_ref ? { output_ref: record.output_ref } : {}),
  };
}

/** A webhook URL as a run's document shows it: its query and fragment, which may hold a token, cut. */
function withoutQuery(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

/**
 * An ended run's document as its completion webhook sends it: as GET answers it, but with a stored
 * output over `inlineBytes` linked (a delivery travels as one asynchronous invocation on AWS, whose
 * payload is bounded far below an answer's).
 */
export async function endedRunDocument(
  deps: CoreDeps,
  record: CallRunRecord,
  inlineBytes: number,
): Promise<RunDocument> {
  return withOutput(deps, describeRun(record), inlineBytes);
}

/** The run with a stored output in its body: read back, or as a download link when too large to answer. */
async function withOutput(
  deps: CoreDeps,
  run: RunDocument & { output_ref?: CallRunRecord['output_ref'] },
  inlineBytes = Number.POSITIVE_INFINITY,
): Promise<RunDocument> {
  const { output_ref: ref, ...rest } = run;
  if (!ref || !rest.result) return rest;
  const { output, linked } =
    ref.bytes > inlineBytes
      ? { output: await outputLink(deps, ref), linked: true }
      : await answerStoredOutput(deps, ref);
  const body = rest.result.body as { warnings?: unknown[] };
  const warnings = [...(body.warnings ?? []).filter((w) => (w as { code?: string }).code !== OUTPUT_AS_URL)];
  if (linked) warnings.push(outputAsUrlWarning(output as Parameters<typeof outputAsUrlWarning>[0]));
  return { ...rest, result: { ...rest.result, body: { ...rest.result.body, data: output, warnings } } };
}

/** A running run well past its deadline, as it is answered: failed, interrupted. Undefined otherwise. */
function interrupted(deps: CoreDeps, record: CallRunRecord): CallRunRecord | undefined {
  if (record.status !== 'running' && record.status !== 'queued') return undefined;
  const due = Date.parse(record.deadline_at) + INTERRUPTED_AFTER_MS;
  if (deps.clock.now().getTime() < due) return undefined;
  // One its caller had asked to cancel is cancelled, as the cancel said it would be.
  const cancelled = record.cancel_requested_at !== null;
  const code = cancelled ? 'TIMEOUT' : 'SERVICE_UNAVAILABLE';
  return {
    ...record,
    status: cancelled ? 'cancelled' : 'failed',
    ended_at: new Date(due).toISOString(),
    result_status: ERROR_CODES[code].status,
    result_body: {
      error: {
        code,
        message: `Run ${record.run_id} was interrupted: the platform stopped while it ran; its call record (GET /usage/logs, by its request_id) says what it used and was charged`,
        is_retryable: ERROR_CODES[code].retryable,
        ...(cancelled ? { details: { reason: 'cancelled' } } : {}),
      },
      metadata: { request_id: record.request_id, ...(record.trace_id ? { trace_id: record.trace_id } : {}) },
    },
  };
}
