/**
 * The state one managed loop's tools share (its sandbox session, the secrets to redact, the run's
 * deadline and signal, the compute time and tool-call log so far, the submitted result) and what
 * they do with it: log a call (redacted, shortened, capped) and run a command for the model.
 */
import type { ExecResult, SandboxSession } from '../../ports/sandbox.ts';
import { redactSecrets } from '../../shared/redact-secrets.ts';
import type { RunExtras } from './call-context.ts';
import { type CallLogLine, measuredLine } from './call-log-lines.ts';
import type { Deadline } from './deadline.ts';

/** Characters of a command's stdout the model sees (the head); stderr: the tail. */
const MAX_STDOUT_CHARS = 16_000;
const MAX_STDERR_CHARS = 4_000;
/**
 * Tool-call log lines kept per run (the rest are counted in the summary line). They are written in
 * the call record's transaction, which DynamoDB bounds at 100 operations: with the record, the call's
 * own line, the summary, the slot's release, the charge's settlement and the trace, 90 leaves room.
 */
const MAX_TOOL_LOG_LINES = 90;

export interface LoopState {
  session: SandboxSession;
  secrets: Record<string, string>;
  runDeadline: Deadline;
  /** The longest one command may run (the tier's sandbox cap: a run's loop outlives it). */
  commandLimitMs: number;
  signal: AbortSignal;
  computeMs: number;
  logs: CallLogLine[];
  omittedLogs: number;
  /** The last submit_result's arguments. */
  submitted: Record<string, unknown> | undefined;
  /** Strict orchestration: submit_result is refused until a dependency has been called. */
  requireSubCall?: (() => Promise<number>) | undefined;
  /** The orchestrator's dependencies, and the platform-side call their matching custom tools make. */
  dependencies: { id: string; version: string }[];
  callDependency?: RunExtras['callDependency'];
}

export function finishedLogs(state: LoopState): LoopState['logs'] {
  return state.omittedLogs > 0
    ? [...state.logs, measuredLine('info', `${state.omittedLogs} more tool calls not logged`)]
    : state.logs;
}

/**
 * Logs a tool call: `tool` (the manifest's name for it) and how it ended (`ended`, the platform's
 * words: an exit code, a size, a refusal) are its outline; `detail` (its arguments, which the model
 * wrote) is shown only to the workspace whose call it was (call-log-lines.ts).
 */
export function log(
  state: LoopState,
  level: 'info' | 'error',
  tool: string,
  detail: string | undefined,
  ended: string,
): void {
  const outline = `${tool} → ${ended}`;
  logLine(state, level, detail === undefined ? outline : `${tool} ${detail} → ${ended}`, outline);
}

/** Logs a line (redacted, shortened, capped) and its outline, the part that holds none of the call's content. */
export function logLine(state: LoopState, level: 'info' | 'error', message: string, outline: string): void {
  if (state.logs.length >= MAX_TOOL_LOG_LINES) {
    state.omittedLogs++;
    return;
  }
  state.logs.push({
    level,
    message: shorten(redactSecrets(message, state.secrets), 500),
    outline: shorten(redactSecrets(outline, state.secrets), 500),
  });
}

/**
 * A tool call the tool refused before it ran anything (bad arguments, a refused submission, no
 * time left): its log line, at error level as its step and span say (docs/calls.md, "A failed
 * tool"), and the error the model reads.
 */
export function refusal(state: LoopState, line: string, reason: string, outline = line): Error {
  // `outline` is the line without what the model wrote (a path, say): by default the line holds none.
  logLine(state, 'error', line, outline);
  return new Error(reason);
}

export function shorten(text: string, max: number): string {
  const one = text.replace(/\s+/g, ' ');
  return one.length > max ? `${one.slice(0, max)}…` : one;
}

/**
 * A tool call whose command ran and failed: it exited non-zero, was killed, or was stopped at the
 * time limit. Thrown with the text the model sees (the exit status, stdout, the stderr tail), so the
 * model gets it as a tool error and the loop goes on, and the step, the tool call's span and the log
 * all say it failed (docs/calls.md, "A failed tool").
 */
export class ToolFailure extends Error {
  override name = 'ToolFailure';
  /** The span's error type, as the sandbox's exec span names it. */
  readonly code: 'EXIT_STATUS' | 'TIMEOUT';
  readonly exitCode: number | null;
  readonly signal: string | null;
  constructor(output: string, result: Pick<ExecResult, 'exitCode' | 'signal' | 'timedOut'>) {
    super(output);
    this.code = result.timedOut ? 'TIMEOUT' : 'EXIT_STATUS';
    this.exitCode = result.exitCode;
    this.signal = result.signal;
  }

  /** What the model reads (the AI SDK sends a tool error as its toString): the output as it was. */
  override toString(): string {
    return this.message;
  }
}

/**
 * Runs a command in the session, counting its time; the result as the model sees it, returned when
 * the command exited 0 and thrown as a ToolFailure otherwise. `tool` and `detail` are its log
 * line's (log, above).
 */
export async function execForModel(
  state: LoopState,
  command: string,
  tool: string,
  detail: string,
): Promise<string> {
  const remaining = state.runDeadline.remainingMs();
  if (remaining <= 0 || state.signal.aborted)
    throw refusal(state, `${tool} → not run: the time limit has passed`, 'The run’s time limit has passed');
  let result: ExecResult;
  try {
    result = await state.session.exec(command, {
      timeoutMs: Math.min(remaining, state.commandLimitMs),
      signal: state.signal,
    });
  } catch (err) {
    log(state, 'error', tool, `${detail} (${(err as Error).message})`, 'could not run');
    throw new Error('The command could not be run in the sandbox');
  }
  state.computeMs += result.durationMs;
  const ended = result.timedOut
    ? 'stopped at the time limit'
    : result.signal
      ? `killed by ${result.signal}`
      : `exit code ${result.exitCode}`;
  log(state, result.exitCode === 0 ? 'info' : 'error', tool, detail, `${ended} in ${result.durationMs} ms`);
  let stdout = redactSecrets(result.stdout, state.secrets);
  let cut = result.stdoutTruncated;
  if (stdout.length > MAX_STDOUT_CHARS) {
    stdout = stdout.slice(0, MAX_STDOUT_CHARS);
    cut = true;
  }
  let stderr = redactSecrets(result.stderrTail, state.secrets);
  if (stderr.length > MAX_STDERR_CHARS) stderr = `…${stderr.slice(-MAX_STDERR_CHARS)}`;
  const parts = [ended];
  if (stdout) parts.push(`stdout:\n${stdout}${cut ? '\n[stdout cut at the output limit]' : ''}`);
  if (stderr.trim()) parts.push(`stderr:\n${stderr}`);
  const output = parts.join('\n');
  if (result.exitCode !== 0) throw new ToolFailure(output, result);
  return output;
}

/** A tool call's arguments as an object ({} for anything else). */
export function record(args: unknown): Record<string, unknown> {
  return args !== null && typeof args === 'object' && !Array.isArray(args)
    ? (args as Record<string, unknown>)
    : {};
}
