import { redactNeedles, secretNeedles } from './redact-secrets.ts';

/**
 * Secret redaction for text that goes out in pieces (a streamed call's `delta` events): what the
 * pieces add up to is redactSecrets of the whole text, so a secret value, or an encoded form of
 * one, split across two pieces is caught as if it had come whole.
 *
 * How: the text not yet sent is held, and of it only the part that no later text can change is
 * redacted and released. A match that ends in text still to come starts in the last (longest
 * needle - 1) characters, so everything before them is final, unless a match already there
 * straddles that point: then the cut moves back to the match's start. Since no match straddles
 * the cut, redacting each side alone gives what redacting the whole would (redactSecrets replaces
 * whole matches, leftmost first). A caller thus gets the text at most about two needles late, and
 * at once when there is nothing to redact.
 */
export class StreamRedactor {
  private readonly needles: readonly string[];
  /** The longest needle's length - 1: how much of the text's end a later piece can still complete. */
  private readonly reach: number;
  private held = '';

  constructor(secrets: Record<string, string>) {
    this.needles = secretNeedles(secrets);
    this.reach = Math.max(0, ...this.needles.map((n) => n.length - 1));
  }

  /** Takes the next piece; returns the redacted text that can go out now (maybe ''). */
  push(piece: string): string {
    if (this.needles.length === 0) return piece;
    const text = this.held + piece;
    const cut = this.cutBefore(text, text.length - this.reach);
    this.held = text.slice(cut);
    return cut > 0 ? redactNeedles(text.slice(0, cut), this.needles) : '';
  }

  /** The end of the text: the rest, redacted. */
  end(): string {
    const rest = this.held;
    this.held = '';
    return rest && redactNeedles(rest, this.needles);
  }

  /** The latest cut at or before `limit` that splits no match in `text` (nor a UTF-16 surrogate pair). */
  private cutBefore(text: string, limit: number): number {
    let cut = Math.max(0, limit);
    for (;;) {
      let next = cut;
      const before = text.charCodeAt(next - 1);
      if (before >= 0xd800 && before <= 0xdbff) next--;
      for (const needle of this.needles) {
        // The first match that ends past the cut; it straddles the cut when it starts before it.
        const at = text.indexOf(needle, Math.max(0, next - needle.length + 1));
        if (at !== -1 && at < next) next = at;
      }
      if (next === cut) return cut;
      cut = next;
    }
  }
}
