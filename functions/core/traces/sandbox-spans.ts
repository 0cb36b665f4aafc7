/**
 * A sandboxed run as spans: `sandbox` from the session's opening (a task start, on ECS) to its
 * close, and an `exec {program}` span per command with its exit status, duration and, where the
 * sandbox measures it, CPU time: under the managed loop's tool call that ran it (`execute_tool`),
 * or under `sandbox` for a command no tool ran (a code agent's run). Only the program's name is kept, never the command's
 * arguments (a tool's command carries the model's arguments, which may hold secrets), and that name
 * is redacted like the run's logs. Of a loop's command in a call from outside the agent's workspace
 * not even that: it is the model's, which the caller steers and which may have read the caller's
 * own secrets, so its first word is the caller's output like the rest (docs/logs.md, "Whose lines");
 * the agent's owners read such a span whole, so it names no program (`exec`). A code agent's
 * command is its manifest's, named whoever calls.
 */
import type { SandboxSession } from '../../ports/sandbox.ts';
import type { TraceSpan } from '../../ports/tracer.ts';
import { redactSecrets } from '../../shared/redact-secrets.ts';
import { type CallTrace, errorCode } from './call-trace.ts';

/** The run's span, opened before its session is (the TRACEPARENT its code is given names it). */
export function startSandboxSpan(
  trace: CallTrace | undefined,
  kind: string,
): { trace: CallTrace; span: TraceSpan } | undefined {
  if (!trace?.tracer.recording) return undefined;
  return { trace, span: trace.start('sandbox', { attributes: { 'agenthost.sandbox.kind': kind } }) };
}

/** The session, its commands as spans under the run's span, which ends when the session closes. */
export function tracedSession(
  session: SandboxSession,
  run: { trace: CallTrace; span: TraceSpan },
  secrets: Record<string, string>,
  namePrograms: boolean,
): SandboxSession {
  const { trace, span } = run;
  return {
    get workDir() {
      return session.workDir;
    },
    exec: async (command, options) => {
      // A command a loop's tool ran (under its execute_tool) is the model's; a code agent's is its
      // manifest's, the author's own, named whoever calls.
      const tool = trace.scopeHere();
      const program =
        namePrograms || tool === undefined ? programOf(redactSecrets(command, secrets)) : undefined;
      const exec = trace.start(program ? `exec ${program}` : 'exec', {
        parent: tool ?? span.context,
        ...(program ? { attributes: { 'process.executable.name': program } } : {}),
      });
      try {
        const result = await session.exec(command, options);
        exec.set({
          'process.exit.code': result.exitCode ?? undefined,
          'process.exit.signal': result.signal ?? undefined,
          'agenthost.timed_out': result.timedOut || undefined,
          'agenthost.cpu_ms': result.cpuMs === undefined ? undefined : Math.round(result.cpuMs),
        });
        exec.end({ error: result.exitCode === 0 ? undefined : result.timedOut ? 'TIMEOUT' : 'EXIT_STATUS' });
        return result;
      } catch (err) {
        exec.end({ error: errorCode(err) });
        throw err;
      }
    },
    readFile: (path) => session.readFile(path),
    writeFile: (path, data) => session.writeFile(path, data),
    listFiles: (path) => session.listFiles(path),
    close: async () => {
      try {
        await session.close();
      } finally {
        span.end();
      }
    },
  };
}

/**
 * The program of a command already redacted: its first word that is not a variable assignment
 * (`TOKEN=… python3 x.py` runs python3), without a path (`/usr/bin/python3` is python3). A word
 * longer than a program's name is not shown at all: a cut could leave a part of a secret that
 * redaction, which needs the whole value, no longer finds.
 */
function programOf(redactedCommand: string): string {
  const words = redactedCommand.trim().split(/\s+/);
  const first = words.find((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) ?? '';
  const unquoted = first.replace(/^['"]|['"]$/g, '');
  if (unquoted.length > MAX_PROGRAM_NAME) return '[long word]';
  return unquoted.split('/').pop() || 'sh';
}

/** Longer than any program's name on a command line. */
const MAX_PROGRAM_NAME = 64;
