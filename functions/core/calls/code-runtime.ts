import { posix } from 'node:path';
import type { CoreDeps } from '../../ports/core-deps.ts';
import { DEFAULT_SANDBOX_LIMITS } from '../../ports/sandbox.ts';
import { PlatformError } from '../../shared/errors.ts';
import { jsonTooDeep } from '../../shared/json-depth.ts';
import { redactSecrets, redactSecretsInJson } from '../../shared/redact-secrets.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import type { Warning } from '../agents/manifest.ts';
import type { CallContext, EngineRun } from './call-context.ts';
import { type CallLogLine, contentBytes, measuredLine } from './call-log-lines.ts';
import { openRunSession } from './sandbox-run.ts';

/**
 * A command that printed past the stdout limit, so that what was kept is no JSON object: the same
 * call prints the same again, so it is 422 UNPROCESSABLE (not a retryable 500), naming the limit,
 * and the agent's log says the output was cut there (docs/calls.md, "Output").
 */
function outputOverLimit(agent: AgentVersion, limitBytes: number, computeMs: number, stderr: string) {
  const ref = `${agent.org}/${agent.name}/${agent.version}`;
  return Object.assign(
    new PlatformError(
      'UNPROCESSABLE',
      `${ref} printed more than the output limit of ${limitBytes} bytes on stdout; the output was cut there and is not a JSON object`,
      { output_limit_bytes: limitBytes },
    ),
    {
      computeMs,
      logs: [
        withStderr(
          'error',
          `command printed more than ${limitBytes} bytes on stdout [stdout cut at ${limitBytes} bytes: not a JSON object]`,
          stderr,
        ),
      ],
    },
  );
}

/**
 * A line that says how the command ended (`said`: the platform's words) and ends with the last 2 KB
 * of its stderr, which is the caller's: its outline says only how many bytes it was.
 */
function withStderr(
  level: CallLogLine['level'],
  said: string,
  stderr: string,
  label = 'stderr tail',
): CallLogLine {
  if (!stderr) return measuredLine(level, said);
  const tail = stderr.slice(-2000);
  const head = said ? `${said}; ${label}` : label;
  return {
    level,
    message: `${head}: ${tail}`,
    outline: `${head}: ${contentBytes(tail)} (the caller's output, not shown)`,
  };
}

export interface CodeRunResult {
  data: Record<string, unknown>;
  warnings: Warning[];
  computeMs: number;
  /** Log lines for the agent's owners (stderr tail redacted), written with the call record. */
  logs: CallLogLine[];
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

/**
 * The code_runtime engine: the agent's bundle unpacked in a fresh sandbox session, its command run
 * with the JSON input (or, for file calls, the spec's file manifest) on stdin, and stdout's JSON
 * object as `data`. Anything else (non-JSON stdout, a non-zero exit, a crash) is 500 INTERNAL_ERROR;
 * the stderr tail goes to the agent's logs, redacted, never to the caller. Runs are capped by the
 * tier (Free 30 s, Pro and up 5 min) as well as by the call's deadline.
 */
export async function runCodeRuntime(
  deps: CoreDeps,
  call: CallContext,
  run: EngineRun,
): Promise<CodeRunResult> {
  const { input, files, metadata, signal } = run;
  const command = runCommand(call.agent);
  const { session, secrets, placed, runDeadline } = await openRunSession(deps, call, run);
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
    // The tool's one command: the session ends with it (the ECS runner then needs no stop object).
    const result = await session.exec(command, {
      stdin,
      timeoutMs: runDeadline.remainingMs(),
      signal,
      last: true,
    });
    const stderr = redactSecrets(result.stderrTail, secrets).trim();
    const logs: CodeRunResult['logs'] = [];
    if (result.timedOut || signal.aborted) {
      throw Object.assign(
        new PlatformError('TIMEOUT', 'The agent’s command exceeded the deadline and was stopped'),
        {
          computeMs: result.durationMs,
          logs: [
            withStderr('error', `killed at the deadline after ${result.durationMs} ms`, stderr, 'stderr'),
          ],
        },
      );
    }
    let data: unknown;
    try {
      // User code's output is as hostile as a request: too deep a document is no object for us.
      // Redacted here, where the output is produced, so the response, the stored schedule run
      // and the call record never hold an injected secret in any of its forms.
      data = jsonTooDeep(result.stdout) ? undefined : redactSecretsInJson(JSON.parse(result.stdout), secrets);
    } catch {
      data = undefined;
    }
    const failed = result.exitCode !== 0 || data === null || typeof data !== 'object' || Array.isArray(data);
    if (failed && result.exitCode === 0 && result.stdoutTruncated) {
      throw outputOverLimit(call.agent, DEFAULT_SANDBOX_LIMITS.outputBytes, result.durationMs, stderr);
    }
    if (failed) {
      const why =
        result.exitCode !== 0
          ? result.signal
            ? `was killed by ${result.signal}`
            : `exited with status ${result.exitCode}`
          : 'did not print a JSON object on stdout';
      throw Object.assign(new PlatformError('INTERNAL_ERROR', `The agent’s command ${why}`), {
        computeMs: result.durationMs,
        logs: [withStderr('error', `command ${why}`, stderr)],
      });
    }
    if (stderr) logs.push(withStderr('info', '', stderr));
    // Cut, and still a JSON object (what came past the limit was trailing): the documented warning.
    const warnings: Warning[] = result.stdoutTruncated
      ? [
          {
            code: 'TRUNCATED',
            message: `the command printed more than the output limit of ${DEFAULT_SANDBOX_LIMITS.outputBytes} bytes on stdout; what came after it was dropped`,
          },
        ]
      : [];
    return { data: data as Record<string, unknown>, warnings, computeMs: result.durationMs, logs };
  } finally {
    await session.close();
  }
}
