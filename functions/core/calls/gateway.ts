import type { CoreDeps } from '../../ports/core-deps.ts';
import { SHARED } from '../../ports/store.ts';
import { withStoreDeadline } from '../../ports/store-deadline.ts';
import { type FieldIssue, invalidInput, markTraced, PlatformError } from '../../shared/errors.ts';
import { findLatest, findVersion, newestCallableAfter } from '../agents/agent-lookup.ts';
import { type AgentVersion, statusOf } from '../agents/agent-record.ts';
import type { Warning } from '../agents/manifest.ts';
import { userSchemaValidator } from '../agents/user-schema-validator.ts';
import { requireVisible } from '../agents/visibility.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { answerCallOutput } from '../payloads/output-answer.ts';
import { RunHandedOver } from '../runs/run-hand-over.ts';
import { type CallTrace, errorCode } from '../traces/call-trace.ts';
import { startCallTrace } from '../traces/call-trace-start.ts';
import { fileTypePolicy } from './accepted-file-types.ts';
import { chargeCall, priceFor, refundIfOwed } from './call-billing.ts';
import type { CallBasis, CallContext, CallRequest, CallResponse } from './call-context.ts';
import { runWithinDeadline } from './call-engine.ts';
import { checkCallHeaders } from './call-headers.ts';
import { parseCallBody } from './call-input.ts';
import { callOptions } from './call-options.ts';
import { CallReport } from './call-report.ts';
import { callTime } from './call-time.ts';
import { CallVault } from './call-vault.ts';
import { callDeadline, uncarriedRunDeadline } from './deadline.ts';
import { requireTemplateValues } from './direct-llm.ts';
import { checkSubCall, orchestrationFor } from './orchestration.ts';
import { admitCall } from './quotas.ts';
import { carriedOnWhole, recordCallInput, recordedAdmission, recordedCharge } from './recorded-call.ts';
import { countSubCall, requireDeclaredDependency } from './service-keys.ts';

/**
 * POST /{org}/{agent}/{version}/{endpoint}: resolve the version, check access and the endpoint,
 * admit the call against the daily quota and a concurrency lease, validate the input, run the
 * engine within the deadline, and record the call. Every outcome, success or error, is recorded.
 */
export async function callAgent(deps: CoreDeps, auth: AuthContext, req: CallRequest): Promise<CallResponse> {
  const startedMs = Date.now();
  const at = callTime(deps, req.requestId);
  checkCallHeaders(req.headers);
  const tenant = req.headers('x-platform-tenant')?.slice(0, 128) ?? null;
  // A run credential reaches only its orchestrator's declared dependencies (before any lookup).
  if (auth.service) requireDeclaredDependency(auth.service, req);
  const agent = await resolveCallable(deps, auth, req);
  const started = startCallTrace(deps, auth, req, agent, startedMs);
  const trace = started instanceof Promise ? await started : started;
  const vault = new CallVault(auth, agent);
  const report = new CallReport({ auth, request: req, agent, at, startedMs, tenant, trace, vault });
  try {
    const response = await runCall(deps, report);
    if (trace) traceAnswer(response, trace);
    return response;
  } catch (err) {
    // Handed to the run worker: what the call took is the worker's to carry on, not to give back.
    if (err instanceof RunHandedOver) {
      report.handOver();
      throw err;
    }
    const code = report.failed(err);
    await refundIfOwed(deps, report, code);
    if (trace) markTraced(err, trace.traceId);
    throw err;
  } finally {
    await report.end(deps, req.waitUntil);
  }
}

function admissionSpan(call: CallContext, startMs: number, kind: string, err?: unknown): void {
  const span = call.trace?.start('admission', { startMs });
  if (!span) return;
  span.setAttribute('agenthost.quota', kind);
  span.end({ error: err === undefined ? undefined : errorCode(err) });
}

const TRACE_ID_HEADER = 'X-Trace-Id';

/**
 * The call's trace in its answer: `metadata.trace_id` and X-Trace-Id. Not a `traceparent`: W3C
 * Trace Context makes it a request header (a response's is a draft, `traceresponse`), and a header
 * more is checked and written on every call (docs/traces.md, "Cost").
 */
function traceAnswer(response: CallResponse, trace: CallTrace): void {
  response.body.metadata.trace_id = trace.traceId;
  // Set, not an object of it assigned: this runs for every call.
  response.headers[TRACE_ID_HEADER] = trace.traceId;
}

function traceHeaders(trace: CallTrace): Record<string, string> {
  return { [TRACE_ID_HEADER]: trace.traceId };
}

/**
 * The steps of a call whose agent is known, each noted in its report for the record. Once its
 * deadline is known, the store's retries of conflicts and throttling are bounded by it (not past
 * it, and not short of it either: store-deadline.ts).
 */
async function runCall(deps: CoreDeps, report: CallReport): Promise<CallResponse> {
  const call = await prepareCall(deps, report.call);
  return withStoreDeadline(call.deadline.processMs, () => runPrepared(deps, report, call));
}

async function runPrepared(deps: CoreDeps, report: CallReport, call: CallContext): Promise<CallResponse> {
  const { auth, agent, request } = call;
  const { input, files, metadata, cleanup } = await parseCallBody(
    request.body,
    request.contentType,
    fileTypePolicy(agent),
  );
  report.onEnd(cleanup);
  // A run not carried on keeps a streamed call's cap (docs/runs.md): its files are known only now.
  if (request.run && (files.length > 0 || !carriedOnWhole(agent)))
    call.deadline = uncarriedRunDeadline(deps, call);
  // Checked before admission: a call refused for its input counts against no quota.
  const warnings = await validateInput(agent, input);
  requirePromptValues(agent, input, files.length > 0);
  // A run's steps (its admission, its charge, its engine's), recorded to be carried on elsewhere.
  const { steps } = request;
  // Sub-calls made with a run's service key do not count against the caller's quotas.
  if (!auth.service) {
    const kind = quotaKind(call);
    // The quota check and the wait for a concurrency slot, as the call's first span (it starts
    // none of its own: recorded after the fact, no scope needed).
    const admitted = Date.now();
    try {
      report.admission = steps
        ? await recordedAdmission(deps, steps, auth, call.deadline.platformMs(), kind)
        : await admitCall(deps, auth, call.deadline.platformMs(), kind);
      admissionSpan(call, admitted, kind);
      if (request.stream && request.onDelivered) report.holdSlotUntilDelivered(request.onDelivered);
    } catch (err) {
      admissionSpan(call, admitted, kind, err);
      throw err;
    }
  }
  const orchestration = await orchestrationFor(deps, call, callAgent);
  report.onEnd(orchestration?.revoke);
  const options = callOptions(request.headers, auth.accountId);
  if (call.deadline.remainingMs() <= 0)
    throw new PlatformError('TIMEOUT', 'The call’s deadline passed before it could start');
  // Charged before it runs (docs/billing.md): 402 and nothing runs without the credits.
  report.billed = steps ? await recordedCharge(deps, steps, call) : await chargeCall(deps, call);
  // Its input, once it is admitted and charged (a refused call's is kept nowhere), but for a call
  // with files or one that cannot be made again: such a run is not carried on (docs/runs.md).
  if (steps && files.length === 0 && carriedOnWhole(agent)) await recordCallInput(steps, request, input);
  // A streamed call's first byte: everything that refuses a call has passed.
  // A deprecated version's headers: read once, before a streamed answer's head goes out.
  const headers = await deprecationHeaders(deps, agent, request.endpoint);
  const opening = request.stream?.open(
    call.trace ? { ...headers, ...traceHeaders(call.trace) } : headers,
    call,
  );
  // A run's stream opens once its record is written (edge/async-call.ts); a streamed call's at once.
  const opened = opening instanceof Promise ? await opening : opening;
  const result = await runWithinDeadline(deps, call, {
    input,
    files,
    metadata,
    options,
    extras: orchestration?.extras,
    meter: report.meter,
    tokens: report.tokens,
    // What reaches the caller decides whether a failed call is refunded (call-billing.ts).
    events: opened && report.delivering(opened),
    steps,
  });
  report.ran(result);
  // Too large to answer inline: stored and answered as a download link. A failure to store it is
  // the call's failure, recorded as such, never a success the caller cannot read.
  const answer = request.wholeOutput
    ? { data: result.data, warnings: [] }
    : await answerCallOutput(deps, request.requestId, result.data);
  return {
    body: {
      data: answer.data,
      warnings: [...warnings, ...result.warnings, ...answer.warnings],
      metadata: { processing_time_ms: Date.now() - call.startedMs, version: agent.version },
    },
    headers,
  };
}

/**
 * The call's deadline (for a sub-call, within its orchestrator's, after the sub-call checks, and
 * counted against the run's credential) and its price.
 */
async function prepareCall(deps: CoreDeps, basis: CallBasis): Promise<CallContext> {
  const { auth, agent } = basis;
  requireBundle(agent);
  let deadline = callDeadline(deps, agent, basis.request.headers('x-platform-deadline-ms'), {
    streamed: basis.request.stream !== undefined,
    run: basis.request.run,
    tier: auth.tier,
  });
  if (auth.service) {
    deadline = checkSubCall(deps, auth.service, agent, deadline);
    if (auth.serviceKeyHash) await countSubCall(deps, auth.serviceKeyHash);
  }
  // A private agent passed the visibility check (resolveCallable) only for a member of its workspace.
  const member = agent.manifest.is_public ? undefined : true;
  return { ...basis, deadline, price: await priceFor(deps, auth, agent, member) };
}

/**
 * A code_runtime agent whose command runs a file of its bundle (an entrypoint, `node main.js`,
 * `python3 app.py`, `./run.sh`) cannot run before the bundle is uploaded: the caller would get the
 * sandbox's "exited with status 1" as a 500. Refused before any quota is spent, naming what is
 * missing and how the author adds it. A command of the sandbox's own programs alone (`cat`,
 * `echo {}`) runs without a bundle, as it always has (docs/calls.md).
 */
function requireBundle(agent: AgentVersion): void {
  const m = agent.manifest;
  if (m.execution_engine !== 'code_runtime' || agent.bundle) return;
  const command = m.runtime?.command ?? m.run_command;
  if (command !== undefined && !namesBundleFile(command)) return;
  const ref = `${agent.org}/${agent.name}/${agent.version}`;
  throw invalidInput([
    {
      field: 'bundle',
      message: `${ref} has no uploaded code bundle to run; its author uploads one with POST /agents/{id}/upload (or agenthost publish)`,
    },
  ]);
}

/** Whether a command names a file it expects in the work dir: a relative path, or a script by its extension. */
function namesBundleFile(command: string): boolean {
  return command
    .split(/\s+/)
    .map((word) => word.replace(/^['"]|['"]$/g, ''))
    .some(
      (word) =>
        /^\.{1,2}\//.test(word) ||
        (!word.startsWith('/') && /^[\w./-]+\.(m?js|cjs|ts|mts|py|sh|rb|pl|php|jar|wasm)$/.test(word)),
    );
}

/** Which daily quota the call counts against: paid calls, sandboxed runs and LLM calls each have one. */
function quotaKind(call: CallContext): 'paid' | 'sandbox' | 'llm' {
  if (call.price > 0) return 'paid';
  return call.agent.manifest.execution_engine !== 'direct_llm' ? 'sandbox' : 'llm';
}

/** The version to run, if the caller may run it: 404 for anything unknown, 403 for a private agent of another workspace. */
async function resolveCallable(deps: CoreDeps, auth: AuthContext, req: CallRequest): Promise<AgentVersion> {
  const ref = `${req.org}/${req.agent}/${req.version}`;
  // Read shared: a call only reads its version (every call of it reads the same one).
  const agent = await findVersion(deps, req.org, req.agent, req.version, SHARED);
  if (!agent || agent.deleted_at) throw new PlatformError('NOT_FOUND', `Agent ${ref} not found`);
  await requireVisible(deps, agent, { accountId: auth.accountId }, { ref });
  const status = statusOf(agent, deps.clock.now());
  if (status === 'sunset') {
    const latest = await findLatest(deps, req.org, req.agent);
    throw new PlatformError(
      'NOT_FOUND',
      `${ref} reached its sunset on ${agent.sunset_at}${latest ? `; call ${latest.version}` : ''}`,
    );
  }
  if (agent.manifest.type === 'skill') {
    throw new PlatformError('NOT_FOUND', `${ref} is a skill: skills are attached to calls, not called`);
  }
  if (agent.manifest.run_mode === 'always_on') {
    // Run as a call it would start an app that never answers, until the deadline.
    throw new PlatformError(
      'UNPROCESSABLE',
      `${ref} is an always-on agent: it runs as a service with a URL of its own and is not called; deploy it with \`agenthost services deploy ${req.org}/${req.agent}\` (POST /workspaces/{workspace_id}/services) and send requests to the service’s URL`,
      { run_mode: 'always_on' },
    );
  }
  if (req.endpoint !== agent.manifest.default_endpoint) {
    throw new PlatformError(
      'NOT_FOUND',
      `${ref} has no endpoint "${req.endpoint}"; it answers /${agent.manifest.default_endpoint}`,
      // A client that named no endpoint (the SDK sends `run`) calls this one instead: sdk/src/call.ts.
      { default_endpoint: agent.manifest.default_endpoint },
    );
  }
  return agent;
}

/**
 * A prompt agent's template placeholders need values (400 naming them), as its engine renders it;
 * the engine's `files` variable is there whenever the call has files (direct-llm.ts).
 */
function requirePromptValues(agent: AgentVersion, input: Record<string, unknown>, hasFiles: boolean): void {
  const m = agent.manifest;
  if (m.execution_engine !== 'direct_llm' || !m.prompt_template) return;
  requireTemplateValues(m.prompt_template, hasFiles ? { ...input, files: true } : input);
}

/** Validates the input against the version's input_schema (ajv, compiled once per schema). */
async function validateInput(agent: AgentVersion, input: Record<string, unknown>): Promise<Warning[]> {
  const schema = agent.manifest.input_schema as Record<string, unknown> | undefined;
  if (!schema) return [];
  const validate = await userSchemaValidator(schema);
  if (!validate(input)) {
    const issues: FieldIssue[] = (validate.errors ?? []).map((e) => {
      const extra =
        e.keyword === 'required' ? `/${(e.params as { missingProperty: string }).missingProperty}` : '';
      const path = `${e.instancePath}${extra}`.split('/').filter(Boolean).join('.');
      return { field: path ? `body.${path}` : 'body', message: e.message ?? 'is invalid' };
    });
    throw invalidInput(issues);
  }
  const warnings: Warning[] = [];
  const props = (schema.properties ?? {}) as Record<string, { deprecated?: boolean }>;
  for (const [name, prop] of Object.entries(props)) {
    if (prop?.deprecated === true && input[name] !== undefined) {
      warnings.push({
        code: 'DEPRECATED_FIELD',
        field: name,
        message: `${name} is deprecated and will be removed in the next version`,
      });
    }
  }
  return warnings;
}

/**
 * Deprecation, Sunset (HTTP date) and a Link to the successor version, for deprecated versions. The
 * successor is the newest later version that still answers (not deleted, not past its sunset); when
 * none does (the successor was deleted), there is no Link rather than one to a 404.
 */
async function deprecationHeaders(
  deps: CoreDeps,
  agent: AgentVersion,
  endpoint: string,
): Promise<Record<string, string>> {
  if (!agent.deprecated_at || !agent.sunset_at) return {};
  const successor = await newestCallableAfter(deps, agent);
  return {
    Deprecation: 'true',
    Sunset: new Date(agent.sunset_at).toUTCString(),
    ...(successor
      ? { Link: `</${agent.org}/${agent.name}/${successor.version}/${endpoint}>; rel="successor-version"` }
      : {}),
  };
}
