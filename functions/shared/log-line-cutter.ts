/**
 * A service's output cut into log lines, one rule on both deployments (docs/logs.md, "Long
 * lines"): a line longer than MAX_LOG_LINE_BYTES keeps its first and its last
 * LOG_LINE_KEEP_BYTES, joined by a marker saying how many bytes were left out. Locally the lines
 * go to the store (adapters/local/service-log-pump.ts), in AWS to CloudWatch through the app
 * container's output (containers/service-app-launcher.ts), so both show the same line.
 *
 * Why 16 KiB: Docker's log drivers, the awslogs driver included, split a line at 16 KiB, and a
 * line longer than a screen is read for its start (what it is) and its end (how it ended); a
 * 300 KB line kept whole filled pages of the log view and a stored log line. The cut is streamed:
 * a line that never ends holds at most twice LOG_LINE_KEEP_BYTES, not all it printed.
 */
import { redactCutEdges } from './redact-secrets.ts';

export const MAX_LOG_LINE_BYTES = 16 * 1024;
/** What a cut line keeps of its start, and of its end. */
export const LOG_LINE_KEEP_BYTES = 8 * 1024;

/** The marker in the middle of a cut line. */
export function cutMarker(droppedBytes: number): string {
  return ` …[${droppedBytes} bytes cut from this line]… `;
}

/**
 * Where `buf` may be cut without splitting a UTF-8 character: back to the start of one (a head
 * keeps at most `at` bytes), or with `forward` on to the next (a tail keeps at most the rest).
 */
function charBoundary(buf: Buffer, at: number, forward = false): number {
  let i = Math.min(at, buf.length);
  // 0b10xxxxxx is a continuation byte: the character began before it.
  while (i > 0 && i < buf.length && ((buf[i] as number) & 0xc0) === 0x80) i += forward ? 1 : -1;
  return i;
}

/** One stream's line being cut: its start, its rolling end, and what fell between. */
class LongLine {
  private readonly secrets: Record<string, string>;

  constructor(secrets: Record<string, string>) {
    this.secrets = secrets;
  }

  private head: Buffer = Buffer.alloc(0);
  private tail: Buffer = Buffer.alloc(0);
  private total = 0;

  add(bytes: Buffer): void {
    if (bytes.length === 0) return;
    const before = this.total;
    this.total += bytes.length;
    // Up to the limit the line is kept whole; past it the head is frozen at its start.
    if (before < MAX_LOG_LINE_BYTES) {
      const room = MAX_LOG_LINE_BYTES - this.head.length;
      this.head = Buffer.concat([this.head, bytes.subarray(0, room)]);
      bytes = bytes.subarray(room);
      if (bytes.length === 0) return;
    }
    // Past the limit: the first LOG_LINE_KEEP_BYTES stay, the rest rolls through the tail.
    if (this.head.length > LOG_LINE_KEEP_BYTES) {
      const keep = charBoundary(this.head, LOG_LINE_KEEP_BYTES);
      bytes = Buffer.concat([this.head.subarray(keep), bytes]);
      this.head = this.head.subarray(0, keep);
    }
    const rolled = Buffer.concat([this.tail, bytes]);
    this.tail = rolled.subarray(charBoundary(rolled, Math.max(0, rolled.length - LOG_LINE_KEEP_BYTES), true));
  }

  /** The line as it is kept, and the cutter ready for the next. */
  take(): string {
    let text = this.head.toString('utf8');
    if (this.total > MAX_LOG_LINE_BYTES) {
      // A secret value the cut split in two would escape redaction of whole values: masked here.
      const ends = redactCutEdges(text, this.tail.toString('utf8'), this.secrets);
      text = `${ends.head}${cutMarker(this.total - this.head.length - this.tail.length)}${ends.tail}`;
    }
    this.head = Buffer.alloc(0);
    this.tail = Buffer.alloc(0);
    this.total = 0;
    return text;
  }

  get empty(): boolean {
    return this.total === 0;
  }
}

/** Splits a stream's bytes into lines (without their `\n`), each cut by the rule above. */
export class LogLineCutter {
  private readonly line: LongLine;

  /** `secrets`: the values a cut must not split in two (the caller still redacts whole lines). */
  constructor(secrets: Record<string, string> = {}) {
    this.line = new LongLine(secrets);
  }

  /** The lines this chunk completed. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.line.add(chunk.subarray(start, nl));
      lines.push(this.line.take());
      start = nl + 1;
    }
    if (start < chunk.length) this.line.add(chunk.subarray(start));
    return lines;
  }

  /** What is left of an unfinished last line, once the stream has ended. */
  end(): string | undefined {
    return this.line.empty ? undefined : this.line.take();
  }
}
