import { readFile } from 'node:fs/promises';
import type { CoreDeps } from '../../ports/core-deps.ts';
import {
  DEFAULT_SANDBOX_LIMITS,
  type SandboxSession,
  SandboxUnavailableError,
  type SessionSpec,
} from '../../ports/sandbox.ts';
import { PlatformError } from '../../shared/errors.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import { resolveSecretsForRun } from '../secrets/secrets.ts';
import { startSandboxSpan, tracedSession } from '../traces/sandbox-spans.ts';
import type { CallContext, EngineRun } from './call-context.ts';
import type { CallFile } from './call-input.ts';
import { Deadline } from './deadline.ts';
import { answeringCapacity } from './sandbox-capacity.ts';

/**
 * The declared secrets of a run: required ones must all be in the vault (400 MISSING_SECRETS
 * naming them, never a value); optional ones are injected when present; nothing else is.
 */
export async function runSecrets(
  deps: CoreDeps,
  workspaceId: string,
  agent: AgentVersion,
): Promise<Record<string, string>> {
  const required = agent.manifest.required_secrets;
  const optional = agent.manifest.optional_secrets;
  const { values, missing } = await resolveSecretsForRun(deps, workspaceId, [...required, ...optional]);
  const missingRequired = missing.filter((n) => required.includes(n));
  if (missingRequired.length > 0) {
    throw new PlatformError(
      'MISSING_SECRETS',
      `The agent needs these secrets in your workspace vault: ${missingRequired.join(', ')}`,
      { missing: missingRequired },
    );
  }
  return values;
}

export interface PlacedFile {
  /** Relative to the working directory: `input/01-report.pdf`. */
  path: string;
  file: CallFile;
}

export interface RunSession {
  session: SandboxSession;
  /**
   * The same session for the platform's own commands (a loop's working directory recorded:
   * workdir-snapshots.ts): neither the run's compute time nor its trace. Closed with `session`.
   */
  platformSession: SandboxSession;
  /** The injected secret values (for redaction). */
  secrets: Record<string, string>;
  placed: PlacedFile[];
  /** The earlier of the call's deadline and the tier's sandbox cap (a run's loop: its own deadline). */
  runDeadline: Deadline;
  /** The longest one command may run: the tier's sandbox cap (docs/runs.md, "How long a run lasts"). */
  commandLimitMs: number;
}

/**
 * What every sandboxed engine does before running anything: resolve the declared secrets (400
 * MISSING_SECRETS), cap the run by the tier (Free 30 s, others 5 min), fetch the bundle, place the
 * call's files under `input/`, and open the session (a sandbox that cannot run is a clear 500).
 *
 * `commands`: the session runs many commands (a managed loop's). A run's loop then lives as long
 * as the run (up to an hour: docs/runs.md, "How long a run lasts"), each of its commands within the
 * tier's sandbox cap; a call's loop, and a code tool's one command, within the cap whole.
 */
export async function openRunSession(
  deps: CoreDeps,
  call: CallContext,
  run: EngineRun,
  { inject = true, commands = false }: { inject?: boolean; commands?: boolean } = {},
): Promise<RunSession> {
  const { auth, agent } = call;
  const { requestId } = call.request;
  const secretsWs = await call.vault.workspaceId(deps);
  const secrets = await runSecrets(deps, secretsWs, agent);
  const commandLimitMs = TIER_LIMITS[auth.tier].sandboxMaxTimeoutSeconds * 1000;
  const runDeadline =
    commands && call.request.run
      ? call.deadline
      : call.deadline.earlier(Deadline.in(deps.clock, commandLimitMs));
  let bundle: SessionSpec['bundle'];
  if (agent.bundle) {
    const data = await deps.bundles.get(agent.bundle.key);
    if (!data)
      throw new Error(`Bundle ${agent.bundle.key} of ${agent.org}/${agent.name} is missing from the store`);
    bundle = { data, format: agent.bundle.format, key: agent.bundle.key, sha256: agent.bundle.sha256 };
  }
  const placed = run.files.map((file, i) => ({
    path: `input/${String(i + 1).padStart(2, '0')}-${safeName(file.original_name)}`,
    file,
  }));
  // The run's span, open before the session is: its code is given it as TRACEPARENT, so the calls
  // it makes to the platform hang under it.
  const traced = startSandboxSpan(call.trace, deps.sandbox.kind);
  try {
    const opened = await deps.sandbox.openSession({
      runId: requestId,
      workspaceId: agent.workspace_id,
      reuseScope: { workspaceId: secretsWs, agentVersion: agent.id },
      bundle,
      files: await Promise.all(
        placed.map(async (p) => ({ path: p.path, data: await readFile(p.file.path) })),
      ),
      env: {
        ...(inject ? secrets : {}),
        PLATFORM_RUN_ID: requestId,
        PLATFORM_AGENT: `${agent.org}/${agent.name}/${agent.version}`,
        ...(traced ? { TRACEPARENT: traced.trace.traceparent(traced.span) } : {}),
        ...run.extras?.env,
      },
      network: run.extras?.network ?? 'none',
      ...(run.extras?.hostLoopbackPorts ? { hostLoopbackPorts: run.extras.hostLoopbackPorts } : {}),
      limits: DEFAULT_SANDBOX_LIMITS,
      ...(agent.manifest.sandbox
        ? { resources: { cpu: agent.manifest.sandbox.cpu, memoryMb: agent.manifest.sandbox.memory_mb } }
        : {}),
      deadlineMs: runDeadline.processMs,
    });
    // The service key is redacted from logs (and spans) like any secret.
    const serviceKey = run.extras?.env?.PLATFORM_SERVICE_KEY;
    const redacted = serviceKey ? { ...secrets, PLATFORM_SERVICE_KEY: serviceKey } : secrets;
    // A loop's command's program is named only on the agent's own workspace's calls (sandbox-spans.ts).
    const platformSession = answeringCapacity(opened);
    const withSpans = traced
      ? tracedSession(platformSession, traced, redacted, secretsWs === agent.workspace_id)
      : platformSession;
    const session = run.meter ? run.meter.meter(withSpans) : withSpans;
    return {
      session,
      platformSession,
      secrets: redacted,
      placed,
      runDeadline,
      commandLimitMs,
    };
  } catch (err) {
    traced?.span.end({ error: err instanceof Error ? err.name : 'Error' });
    if (err instanceof SandboxUnavailableError) {
      deps.logger.error('sandbox unavailable', { error: err.message });
      throw new PlatformError(
        'INTERNAL_ERROR',
        'Sandboxed runs are not available on this platform right now (see its start-up log)',
      );
    }
    throw err;
  }
}

function safeName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? 'file';
  return (
    base
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .replace(/^\.+/, '_')
      .slice(0, 100) || 'file'
  );
}
