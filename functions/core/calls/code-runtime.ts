import { posix } from 'node:path';
import type { Deps } from '../../platform/deps.ts';
import { PlatformError } from '../../platform/errors.ts';
import { DEFAULT_SANDBOX_LIMITS, SandboxUnavailableError, type SessionSpec } from '../../ports/sandbox.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import type { Warning } from '../agents/manifest.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { keys } from '../keys.ts';
import { resolveSecretsForRun } from '../secrets/secrets.ts';
import type { CallFile } from './call-input.ts';

export interface CodeRunResult {
  data: Record<string, unknown>;
  warnings: Warning[];
  computeMs: number;
  /** Log lines for the agent's owners (stderr tail redacted), written with the call record. */
  logs: { level: 'info' | 'error'; message: string }[];
}

/**
 * Whose vault a run's secrets come from: the agent's own workspace when the caller is a member of
 * it (authors and their teams), otherwise the caller's personal workspace, so that a stranger
 * calling a public tool supplies their own keys and never uses the author's.
 */
export async function secretsWorkspace(deps: Deps, auth: AuthContext, agent: AgentVersion): Promise<string> {
  const member = await deps.store.get(keys.member(agent.workspace_id, auth.accountId));
  return member ? agent.workspace_id : auth.personalWorkspaceId;
}

/**
 * The declared secrets of a run: required ones must all be in the vault (400 MISSING_SECRETS
 * naming them, never a value); optional ones are injected when present; nothing else is.
 */
export async function runSecrets(
  deps: Deps,
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

/** The command a tool agent runs: runtime.command, else run_command, else its entrypoint by file type. */
export function runCommand(agent: AgentVersion): string {
  const m = agent.manifest;
  if (m.runtime?.command) return m.runtime.command;
  if (m.run_command) return m.run_command;
  if (m.entrypoint) {
    const quoted = `'${m.entrypoint.replace(/'/g, `'\\''`)}'`;
    if (/\.(m?js|cjs)$/.test(m.entrypoint)) return `node ${quoted}`;
    if (/\.py$/.test(m.entrypoint)) return `python3 ${quoted}`;
    return `./${quoted}`;
  }
  throw new PlatformError(
    'UNPROCESSABLE',
    'The agent has no runtime.command, run_command or entrypoint to run',
  );
}

/** Replaces every secret value in `text` (long enough to be meaningful) with [REDACTED]. */
export function redactSecrets(text: string, secrets: Record<string, string>): string {
  let out = text;
  for (const value of Object.values(secrets).sort((a, b) => b.length - a.length)) {
    if (value.length >= 4) out = out.split(value).join('[REDACTED]');
  }
  return out;
}

/**
 * The code_runtime engine: the agent's bundle unpacked in a fresh sandbox session, its command run
 * with the JSON input (or, for file calls, the spec's file manifest) on stdin, and stdout's JSON
 * object as `data`. Anything else (non-JSON stdout, a non-zero exit, a crash) is 500 INTERNAL_ERROR;
 * the stderr tail goes to the agent's logs, redacted, never to the caller. Runs are capped by the
 * tier (Free 30 s, Pro and up 5 min) as well as by the call's deadline.
 */
export async function runCodeRuntime(
  deps: Deps,
  auth: AuthContext,
  agent: AgentVersion,
  input: Record<string, unknown>,
  files: CallFile[],
  metadata: Record<string, unknown> | undefined,
  deadlineMs: number,
  requestId: string,
  signal: AbortSignal,
): Promise<CodeRunResult> {
  const command = runCommand(agent);
  const secrets = await runSecrets(deps, await secretsWorkspace(deps, auth, agent), agent);
  const tierCap = Date.now() + TIER_LIMITS[auth.tier].sandboxMaxTimeoutSeconds * 1000;
  const runDeadline = Math.min(deadlineMs, tierCap);
  let bundle: { data: Buffer; format: 'tar.gz' | 'zip' } | undefined;
  if (agent.bundle) {
    const data = await deps.bundles.get(agent.bundle.key);
    if (!data)
      throw new Error(`Bundle ${agent.bundle.key} of ${agent.org}/${agent.name} is missing from the store`);
    bundle = { data, format: agent.bundle.format };
  }
  const placed = files.map((f, i) => ({
    path: `input/${String(i + 1).padStart(2, '0')}-${safeName(f.original_name)}`,
    file: f,
  }));
  const session = await openSession(deps, {
    runId: requestId,
    workspaceId: agent.workspace_id,
    bundle,
    files: placed.map((p) => ({ path: p.path, data: p.file.data })),
    env: {
      ...secrets,
      PLATFORM_RUN_ID: requestId,
      PLATFORM_AGENT: `${agent.org}/${agent.name}/${agent.version}`,
    },
    network: 'none',
    limits: DEFAULT_SANDBOX_LIMITS,
    deadlineMs: runDeadline,
  });
  try {
    const stdin =
      files.length > 0
        ? JSON.stringify({
            files: placed.map((p) => ({
              path: posix.join(session.workDir, p.path),
              original_name: p.file.original_name,
              content_type: p.file.content_type,
              size_bytes: p.file.size_bytes,
            })),
            metadata: metadata ?? null,
          })
        : JSON.stringify(input);
    const result = await session.exec(command, { stdin, timeoutMs: runDeadline - Date.now(), signal });
    const stderr = redactSecrets(result.stderrTail, secrets).trim();
    const logs: CodeRunResult['logs'] = [];
    if (result.timedOut || signal.aborted) {
      throw Object.assign(
        new PlatformError('TIMEOUT', 'The agent’s command exceeded the deadline and was stopped'),
        {
          computeMs: result.durationMs,
          logs: [
            {
              level: 'error' as const,
              message: `killed at the deadline after ${result.durationMs} ms${stderr ? `; stderr: ${stderr.slice(-2000)}` : ''}`,
            },
          ],
        },
      );
    }
    let data: unknown;
    try {
      data = JSON.parse(result.stdout);
    } catch {
      data = undefined;
    }
    const failed = result.exitCode !== 0 || data === null || typeof data !== 'object' || Array.isArray(data);
    if (failed) {
      const why =
        result.exitCode !== 0
          ? result.signal
            ? `was killed by ${result.signal}`
            : `exited with status ${result.exitCode}`
          : 'did not print a JSON object on stdout';
      throw Object.assign(new PlatformError('INTERNAL_ERROR', `The agent’s command ${why}`), {
        computeMs: result.durationMs,
        logs: [
          {
            level: 'error' as const,
            message: `command ${why}${stderr ? `; stderr tail: ${stderr.slice(-2000)}` : ''}`,
          },
        ],
      });
    }
    if (stderr) logs.push({ level: 'info', message: `stderr tail: ${stderr.slice(-2000)}` });
    const warnings: Warning[] = result.stdoutTruncated
      ? [{ code: 'TRUNCATED', message: 'the command’s output was cut at the output limit' }]
      : [];
    return { data: data as Record<string, unknown>, warnings, computeMs: result.durationMs, logs };
  } finally {
    await session.close();
  }
}

/** Opens a session; a sandbox that cannot run is a clear 500, not an anonymous one. */
async function openSession(deps: Deps, spec: SessionSpec) {
  try {
    return await deps.sandbox.openSession(spec);
  } catch (err) {
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
