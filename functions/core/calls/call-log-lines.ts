/**
 * A call's own log lines (a tool's stderr tail, a managed loop's tool calls and its end), and what
 * the agent's owners see of them. What a call produced (its stdout, stderr, the tool arguments its
 * model wrote, the model's and the provider's text) belongs to the workspace whose vault the call
 * ran on: a stranger's call of a public agent runs on the stranger's own secrets, and redaction,
 * which knows only a value and a few of its encodings, cannot keep them out of what their code
 * writes (`printenv X | rev`). So every line says, besides its whole text, its outline: what the
 * platform measured of it (outcome, exit status, durations, byte sizes, the author's own tool names),
 * nothing the call's code, input or model wrote. The record keeps the outline alone for a call from
 * outside the agent's workspace (docs/logs.md, "Whose lines").
 */
export interface CallLogLine {
  level: 'info' | 'error';
  /** The whole line, secret values redacted. */
  message: string;
  /** The line without the call's content; absent when the whole line is content. */
  outline?: string | undefined;
}

/** A line that holds nothing the call wrote (its measures only): its outline is itself. */
export function measuredLine(level: CallLogLine['level'], message: string): CallLogLine {
  return { level, message, outline: message };
}

/** What the agent's owners read of a line of a call from outside their workspace. */
export function outlineOf(line: CallLogLine): string {
  return line.outline ?? `[${contentBytes(line.message)} of the caller's output, not shown]`;
}

/** `text`'s size as a line says it: `57 bytes`. */
export function contentBytes(text: string): string {
  const n = Buffer.byteLength(text);
  return `${n} byte${n === 1 ? '' : 's'}`;
}

/** Who a call's lines are shown to whole, as the stored line says (`content`). */
export type LineContent = 'whole' | 'outline';
