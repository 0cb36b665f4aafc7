import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { type FieldIssue, invalidInput, PlatformError } from '../../shared/errors.ts';
import { findLatest, findVersion } from '../agents/agent-lookup.ts';
import { type AgentVersion, statusOf, versionString } from '../agents/agent-record.ts';
import { compileInputValidator, type Warning } from '../agents/manifest.ts';
import { requireVisible } from '../agents/visibility.ts';
import { type AuthContext, authenticate } from '../api-keys/api-keys.ts';
import { charge, type InterruptedCallFields, refund, settleOp } from '../billing/ledger.ts';
import { keys } from '../keys.ts';
import { type CallRecord, callRecordItem } from '../usage/call-records.ts';
import { parseCallBody } from './call-input.ts';
import { runCodeRuntime } from './code-runtime.ts';
import { type CallOptions, runDirectLlm } from './direct-llm.ts';
import { runManagedLoop } from './managed-loop.ts';
import { type Admission, admitCall } from './quotas.ts';
import type { RunExtras } from './sandbox-run.ts';
import {
  countSubCall,
  issueServiceKey,
  requireDeclaredDependency,
  type ServiceContext,
  spendDownstreamBudget,
} from './service-keys.ts';

/** The platform's cap on a call's run time (spec "Limits": maximum 300 s, platform-enforced). */
export const MAX_CALL_SECONDS = 300;

export interface CallRequest {
  org: string;
  agent: string;
  version: string;
  endpoint: string;
  /** A stream from HTTP (read once, multipart files spooled to disk), or a Buffer from the platform. */
  body: Buffer | Readable;
  contentType: string | undefined;
  headers: (name: string) => string | undefined;
  requestId: string;
}

export interface CallResponse {
  body: {
    data: Record<string, unknown>;
    warnings: Warning[];
    metadata: { processing_time_ms: number; version: string };
  };
  headers: Record<string, string>;
}

/**
 * POST /{org}/{agent}/{version}/{endpoint}: resolve the version, check access and the endpoint,
 * admit the call against the daily quota and a concurrency lease, validate the input, run the
 * engine within the deadline, and record the call. Every outcome, success or error, is recorded.
 */
export async function callAgent(deps: CoreDeps, auth: AuthContext, req: CallRequest): Promise<CallResponse> {
  const started = Date.now();
  const at = deps.clock.now();
  const tenant = req.headers('x-platform-tenant')?.slice(0, 128) ?? null;
  let agent: AgentVersion | undefined;
  let admission: Admission | undefined;
  let revokeServiceKey: (() => Promise<void>) | undefined;
  let provider: string | null = null;
  let model: string | null = null;
  let tokens = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  let computeMs = 0;
  let engineLogs: { level: 'info' | 'error'; message: string }[] = [];
  /** Credits this call is billed (a paid agent's charge, unless refunded or owed back). */
  const billing = { billed: 0 };
  let removeFiles: (() => Promise<void>) | undefined;
  let outcome: { status: CallRecord['status']; code: string | null; http: number } = {
    status: 'success',
    code: null,
    http: 200,
  };
  try {
    // A run credential reaches only its orchestrator's declared dependencies (before any lookup).
    if (auth.service) requireDeclaredDependency(auth.service, req);
    agent = await resolveCallable(deps, auth, req);
    let deadline = effectiveDeadline(deps, agent, req.headers('x-platform-deadline-ms'));
    if (auth.service) {
      deadline = checkSubCall(deps, auth.service, agent, deadline);
      if (auth.serviceKeyHash) await countSubCall(deps, auth.serviceKeyHash);
    }
    // The lease expires by the store's clock (the platform clock); the timer runs on the process clock.
    const sandboxed = agent.manifest.execution_engine !== 'direct_llm';
    const price = await priceFor(deps, auth, agent);
    // Sub-calls made with a run's service key do not count against the caller's quotas.
    admission = auth.service
      ? undefined
      : await admitCall(
          deps,
          auth,
          deps.clock.now().getTime() + (deadline - Date.now()),
          price > 0 ? 'paid' : sandboxed ? 'sandbox' : 'llm',
        );
    const orchestration = await orchestrationFor(deps, auth, agent, req, deadline);
    revokeServiceKey = orchestration?.revoke;
    {
      const { input, files, metadata, cleanup } = await parseCallBody(req.body, req.contentType);
      removeFiles = cleanup;
      const warnings = validateInput(agent, input);
      const options = callOptions(req.headers, auth.accountId);
      const remaining = deadline - Date.now();
      if (remaining <= 0)
        throw new PlatformError('TIMEOUT', 'The call’s deadline passed before it could start');
      if (price > 0) {
        // Charged before it runs (docs/billing.md): 402 and nothing runs without the credits.
        if (auth.service && auth.serviceKeyHash) {
          await spendDownstreamBudget(deps, auth.serviceKeyHash, price, auth.service.budget);
        }
        const charged = await charge(deps, {
          accountId: auth.accountId,
          amount: price,
          requestId: req.requestId,
          agent: `${agent.org}/${agent.name}/${agent.version}`,
          authorWorkspaceId: agent.workspace_id,
          deadlineMs: deps.clock.now().getTime() + remaining,
          call: callIdentity(auth, req, agent, at.toISOString(), tenant),
        });
        if (charged) billing.billed = price;
      }
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), remaining);
      try {
        const result = await raceDeadline(
          runEngine(
            deps,
            auth,
            agent,
            {
              input,
              files,
              metadata,
              options,
              deadline,
              requestId: req.requestId,
              extras: orchestration?.extras,
            },
            controller.signal,
          ),
          controller.signal,
        );
        provider = result.provider;
        model = result.model;
        tokens = result.usage;
        computeMs = result.computeMs;
        engineLogs = result.logs;
        return {
          body: {
            data: result.data,
            warnings: [...warnings, ...result.warnings],
            metadata: { processing_time_ms: Date.now() - started, version: agent.version },
          },
          headers: await deprecationHeaders(deps, agent, req.endpoint),
        };
      } finally {
        clearTimeout(timer);
        controller.abort();
      }
    }
  } catch (err) {
    // Sandbox engines attach their run time and redacted log lines to the errors they throw.
    const extra = err as { computeMs?: number; logs?: typeof engineLogs };
    if (typeof extra.computeMs === 'number') computeMs = extra.computeMs;
    if (Array.isArray(extra.logs)) engineLogs = extra.logs;
    const code = err instanceof PlatformError ? err.code : 'INTERNAL_ERROR';
    if (billing.billed > 0 && REFUNDED_ON.includes(code)) {
      // Not billed either way: refunded now, or, if this write fails, left pending for
      // reconciliation to refund (no record settles it).
      billing.billed = 0;
      await refund(deps, req.requestId, code).catch((e) => {
        deps.logger.error('refund failed; reconciliation will retry', {
          request_id: req.requestId,
          error: String(e),
        });
      });
    }
    outcome = {
      status: code === 'TIMEOUT' ? 'timeout' : 'error',
      code,
      http: err instanceof PlatformError ? err.status : 500,
    };
    throw err;
  } finally {
    await removeFiles?.().catch(() => undefined);
    await revokeServiceKey?.().catch(() => undefined);
    if (agent) {
      await recordCall(deps, auth, req, agent, admission, {
        at: at.toISOString(),
        tenant,
        outcome,
        duration: Date.now() - started,
        provider,
        model,
        tokens,
        computeMs,
        engineLogs,
        billing,
      });
    }
  }
}

/** Failures on the platform's side, refunded (docs/billing.md). */
const REFUNDED_ON = ['INTERNAL_ERROR', 'LLM_ERROR', 'TIMEOUT', 'UNPROCESSABLE'];

/**
 * What the caller pays per call: the agent's price_credits, except for members of the agent's own
 * workspace (authors and their teams run their agents free).
 */
async function priceFor(deps: CoreDeps, auth: AuthContext, agent: AgentVersion): Promise<number> {
  const price = agent.manifest.price_credits ?? 0;
  if (price <= 0) return 0;
  const member = await deps.store.get(keys.member(agent.workspace_id, auth.accountId));
  return member ? 0 : price;
}

/** The version to run, if the caller may run it: 404 for anything unknown, 403 for a private agent of another workspace. */
async function resolveCallable(deps: CoreDeps, auth: AuthContext, req: CallRequest): Promise<AgentVersion> {
  const ref = `${req.org}/${req.agent}/${req.version}`;
  const agent = await findVersion(deps, req.org, req.agent, req.version);
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
  if (req.endpoint !== agent.manifest.default_endpoint) {
    throw new PlatformError(
      'NOT_FOUND',
      `${ref} has no endpoint "${req.endpoint}"; it answers /${agent.manifest.default_endpoint}`,
    );
  }
  return agent;
}

/**
 * The earliest of the agent's timeout (manifest timeout_seconds, capped at 300 s, and in AWS at
 * PLATFORM_MAX_CALL_SECONDS, just under API Gateway's integration timeout; always-on agents, whose
 * timeout is 0, get the cap) and the caller's X-Platform-Deadline-Ms.
 */
function effectiveDeadline(deps: CoreDeps, agent: AgentVersion, header: string | undefined): number {
  const now = deps.clock.now().getTime();
  const cap = Math.min(MAX_CALL_SECONDS, deps.config.maxCallSeconds);
  const seconds = Math.min(agent.manifest.timeout_seconds || cap, cap);
  let deadline = Date.now() + seconds * 1000;
  if (header !== undefined) {
    if (!/^\d{1,16}$/.test(header.trim())) {
      throw invalidInput([{ field: 'header.x-platform-deadline-ms', message: 'must be epoch milliseconds' }]);
    }
    const callerDeadline = Number(header);
    if (callerDeadline <= now)
      throw new PlatformError('TIMEOUT', 'X-Platform-Deadline-Ms is already in the past');
    // The header is in the platform clock's terms; the timer runs on the process clock.
    deadline = Math.min(deadline, Date.now() + (callerDeadline - now));
  }
  return deadline;
}

/** Validates the input against the version's input_schema (ajv, compiled once per schema). */
function validateInput(agent: AgentVersion, input: Record<string, unknown>): Warning[] {
  const schema = agent.manifest.input_schema as Record<string, unknown> | undefined;
  if (!schema) return [];
  const validate = compileInputValidator(schema);
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

function callOptions(headers: (name: string) => string | undefined, callerAccountId: string): CallOptions {
  const list = (v: string | undefined) =>
    (v ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const only = list(headers('x-platform-skills-only'));
  const flag = (v: string | undefined) => v?.trim().toLowerCase() === 'true';
  return {
    provider: headers('x-platform-provider')?.trim() || undefined,
    model: headers('x-platform-model')?.trim() || undefined,
    // X-Platform-Skills-Only carries the refs, or is `true` with the refs in X-Platform-Skills.
    skills:
      only.length > 0 && !flag(headers('x-platform-skills-only')) ? only : list(headers('x-platform-skills')),
    skillsOnly: only.length > 0,
    noSkills: flag(headers('x-platform-no-skills')),
    callerAccountId,
  };
}

interface EngineOutcome {
  data: Record<string, unknown>;
  warnings: Warning[];
  provider: string | null;
  model: string | null;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
  computeMs: number;
  logs: { level: 'info' | 'error'; message: string }[];
}

async function runEngine(
  deps: CoreDeps,
  auth: AuthContext,
  agent: AgentVersion,
  call: {
    input: Record<string, unknown>;
    files: Awaited<ReturnType<typeof parseCallBody>>['files'];
    metadata: Record<string, unknown> | undefined;
    options: CallOptions;
    deadline: number;
    requestId: string;
    extras?: RunExtras | undefined;
  },
  signal: AbortSignal,
): Promise<EngineOutcome> {
  const engine = agent.manifest.execution_engine;
  if (engine === 'direct_llm') {
    const r = await runDirectLlm(deps, agent, call.input, call.files, call.options, signal);
    return { ...r, computeMs: 0, logs: [] };
  }
  if (engine === 'code_runtime') {
    const r = await runCodeRuntime(
      deps,
      auth,
      agent,
      call.input,
      call.files,
      call.metadata,
      call.deadline,
      call.requestId,
      signal,
      call.extras,
    );
    return {
      ...r,
      provider: null,
      model: null,
      usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    };
  }
  if (engine === 'managed_loop') {
    return runManagedLoop(
      deps,
      auth,
      agent,
      call.input,
      call.files,
      call.metadata,
      call.options,
      call.deadline,
      call.requestId,
      signal,
      call.extras,
    );
  }
  throw new PlatformError(
    'UNPROCESSABLE',
    `${agent.org}/${agent.name} runs on the ${engine} engine, which this platform build does not run yet`,
  );
}

/**
 * A call made with a run's PLATFORM_SERVICE_KEY (a sub-call of an orchestrator): the callee must
 * be callable, a hop must be left, and the callee's deadline is the earlier of its own and the
 * orchestrator's. A sub-call that could not finish in the time left fails with TIMEOUT before it
 * starts. Returns the deadline on the process clock.
 */
function checkSubCall(
  deps: CoreDeps,
  service: ServiceContext,
  agent: AgentVersion,
  deadline: number,
): number {
  const ref = `${agent.org}/${agent.name}/${agent.version}`;
  if (!agent.manifest.callable) {
    throw new PlatformError('FORBIDDEN', `${ref} is not callable as a dependency (callable: false)`);
  }
  if (service.hops_remaining < 1) {
    throw new PlatformError(
      'FORBIDDEN',
      `Hop limit reached: ${service.orchestrator} may not make further calls`,
    );
  }
  const left = service.deadline_ms - deps.clock.now().getTime();
  if (left < 50) throw new PlatformError('TIMEOUT', 'The sub-call would exceed the remaining deadline');
  return Math.min(deadline, Date.now() + left);
}

/**
 * An orchestrator's run (an agent with dependencies) gets a service key bound to it: its hops are
 * the smaller of the caller's X-Platform-Max-Hops (for a sub-call: what the parent had left, less
 * this hop) and its own max_hops; its deadline is the run's; its budget is per_call_downstream_cap;
 * strict when it or its parent is. The key and the platform's URL go in its environment, and the
 * run gets network to reach the platform. The key is deleted when the run ends.
 */
async function orchestrationFor(
  deps: CoreDeps,
  auth: AuthContext,
  agent: AgentVersion,
  req: CallRequest,
  deadline: number,
): Promise<{ extras: RunExtras; revoke: () => Promise<void> } | undefined> {
  const section = agent.manifest.manifest;
  if (!section || section.dependencies.length === 0 || agent.manifest.execution_engine === 'direct_llm') {
    return auth.service?.strict ? { extras: { strict: true }, revoke: async () => undefined } : undefined;
  }
  const header = req.headers('x-platform-max-hops');
  let callerHops: number;
  if (auth.service) {
    callerHops = auth.service.hops_remaining - 1;
  } else if (header !== undefined) {
    if (!/^\d{1,3}$/.test(header.trim())) {
      throw invalidInput([{ field: 'header.x-platform-max-hops', message: 'must be a whole number' }]);
    }
    callerHops = Number(header);
  } else {
    callerHops = section.max_hops;
  }
  const context: ServiceContext = {
    run_id: req.requestId,
    orchestrator: `${agent.org}/${agent.name}/${agent.version}`,
    dependencies: section.dependencies.map((d) => `${d.id}/${d.version}`),
    hops_remaining: Math.max(0, Math.min(callerHops, section.max_hops)),
    deadline_ms: deps.clock.now().getTime() + (deadline - Date.now()),
    budget: section.per_call_downstream_cap,
    strict: auth.service?.strict === true || section.orchestration_mode === 'strict',
  };
  const issued = await issueServiceKey(deps, auth.accountId, context);
  const callDependency = async (
    dependency: { id: string; version: string },
    input: Record<string, unknown>,
  ) => {
    const subAuth = await authenticate(deps, `Bearer ${issued.key}`, { acceptRunCredential: true });
    const [org, name] = dependency.id.split('/') as [string, string];
    const target = await findVersion(deps, org, name, dependency.version);
    try {
      const result = await callAgent(deps, subAuth, {
        org,
        agent: name,
        version: dependency.version,
        endpoint: target?.manifest.default_endpoint ?? 'run',
        body: Buffer.from(JSON.stringify(input)),
        contentType: 'application/json',
        headers: () => undefined,
        requestId: `req_${randomUUID()}`,
      });
      return JSON.stringify({ data: result.body.data, warnings: result.body.warnings });
    } catch (err) {
      if (!(err instanceof PlatformError)) throw err;
      return JSON.stringify({ error: { code: err.code, message: err.message } });
    }
  };
  return {
    extras: {
      env: {
        PLATFORM_SERVICE_KEY: issued.key,
        ...(deps.config.publicUrl ? { PLATFORM_API_URL: deps.config.publicUrl } : {}),
      },
      // Locally the run may also call the API itself with its key; ECS tasks have no route to it
      // and call their dependencies through the platform only (callDependency).
      network: deps.sandbox.egress ? 'egress' : 'none',
      // In a network of its own, the platform's port is one of the few host loopback ports it may
      // reach; the operator's list (PLATFORM_SANDBOX_HOST_PORTS) is the rest.
      hostLoopbackPorts: [...deps.config.sandboxHostPorts, ...loopbackPortOf(deps.config.publicUrl)],
      strict: context.strict,
      subCalls: issued.subCalls,
      callDependency,
    },
    revoke: issued.revoke,
  };
}

/** The port of a URL on this host's loopback (the local platform's own URL), as a list of one or none. */
function loopbackPortOf(url: string | undefined): number[] {
  if (!url) return [];
  const u = new URL(url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) return [];
  return [Number(u.port || (u.protocol === 'https:' ? 443 : 80))];
}

/** Resolves with the work, or rejects with 504 TIMEOUT the moment the deadline's signal fires. */
function raceDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new PlatformError('TIMEOUT', 'The call exceeded its deadline'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Deprecation, Sunset (HTTP date) and a Link to the successor version, for deprecated versions. */
async function deprecationHeaders(
  deps: CoreDeps,
  agent: AgentVersion,
  endpoint: string,
): Promise<Record<string, string>> {
  if (!agent.deprecated_at || !agent.sunset_at) return {};
  const latest = await findLatest(deps, agent.org, agent.name);
  const successor =
    latest && latest.version_number > agent.version_number
      ? latest.version
      : versionString(agent.version_number + 1);
  return {
    Deprecation: 'true',
    Sunset: new Date(agent.sunset_at).toUTCString(),
    Link: `</${agent.org}/${agent.name}/${successor}/${endpoint}>; rel="successor-version"`,
  };
}

/** Who called what: the part of a call record known before the call runs (kept by a charge too). */
function callIdentity(
  auth: AuthContext,
  req: CallRequest,
  agent: AgentVersion,
  at: string,
  tenant: string | null,
): InterruptedCallFields {
  return {
    at,
    caller_key_id: auth.keyId,
    tenant,
    agent_id: agent.id,
    org: agent.org,
    agent: agent.name,
    version: agent.version,
    workspace_id: agent.workspace_id,
    endpoint: req.endpoint,
  };
}

async function recordCall(
  deps: CoreDeps,
  auth: AuthContext,
  req: CallRequest,
  agent: AgentVersion,
  admission: Admission | undefined,
  r: {
    at: string;
    tenant: string | null;
    outcome: { status: CallRecord['status']; code: string | null; http: number };
    duration: number;
    provider: string | null;
    model: string | null;
    tokens: { input_tokens: number; output_tokens: number; total_tokens: number };
    computeMs: number;
    engineLogs: { level: 'info' | 'error'; message: string }[];
    /** Credits billed: settled with the record; 0 for free, refunded or refund-owed calls. */
    billing: { billed: number };
  },
): Promise<void> {
  const ok = r.outcome.status === 'success';
  const record = callRecordItem({
    ...callIdentity(auth, req, agent, r.at, r.tenant),
    request_id: req.requestId,
    caller_account_id: auth.accountId,
    status: r.outcome.status,
    error_code: r.outcome.code,
    http_status: r.outcome.http,
    duration_ms: r.duration,
    provider: r.provider,
    model: r.model,
    ...r.tokens,
    compute_ms: r.computeMs,
    credits: r.billing.billed,
  });
  // The charge is settled in the same transaction as the record: a call whose answer was written
  // is always billed; one that never got here is refunded by reconciliation.
  const settle = r.billing.billed > 0 ? [settleOp(req.requestId)] : [];
  const log = {
    ...keys.agentVersion(agent.id),
    sk: `${keys.agentLogPrefix}${r.at}#${randomUUID()}`,
    timestamp: r.at,
    level: ok ? 'info' : 'error',
    message: ok
      ? `call ${req.requestId} succeeded in ${r.duration} ms (${r.provider}/${r.model}, ${r.tokens.total_tokens} tokens)`
      : `call ${req.requestId} failed with ${r.outcome.code} after ${r.duration} ms`,
    request_id: req.requestId,
    ttl: Math.floor(Date.parse(r.at) / 1000) + 30 * 86_400,
  };
  try {
    // Admitted calls release their concurrency slot in the same transaction.
    const extraLogs = r.engineLogs.map((l, i) => ({
      ...keys.agentVersion(agent.id),
      sk: `${keys.agentLogPrefix}${r.at}#${String(i + 1).padStart(2, '0')}#${randomUUID()}`,
      timestamp: r.at,
      level: l.level,
      message: l.message,
      request_id: req.requestId,
      ttl: log.ttl,
    }));
    if (admission) await admission.finish([record, log, ...extraLogs], settle);
    else
      await deps.store.transactWrite([
        ...[record, log, ...extraLogs].map((item) => ({ put: item })),
        ...settle,
      ]);
  } catch (err) {
    // A failed record must not turn the caller's answer into an error.
    deps.logger.error('call record not written', { request_id: req.requestId, error: String(err) });
  }
}
