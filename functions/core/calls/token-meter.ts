/** About four characters of English text make a token (the vendors' own rule of thumb). */
const CHARS_PER_TOKEN = 4;

/** A call record's token fields (EngineOutcome's usage). */
interface Usage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/**
 * The model tokens a call has used so far, for a call that ends before its engine reports them: a
 * streamed call whose caller hung up, or whose deadline passed, mid-answer (docs/billing.md, "The
 * caller gone"). The provider bills what it generated up to the abort, but its stream reports the
 * counts only at its end, so its record would say 0. Kept here instead: the provider's own counts
 * when its stream gave them (Anthropic's message_start carries the input tokens), otherwise an
 * estimate: the prompt's characters for the input, and for the output the text streamed, at least
 * one token a piece (and never less than an output count the stream reported, which may be stale).
 * Zero while the provider has neither reported a count nor sent a piece: a request that failed
 * before that was not billed. Once the model's work is over (`finished`), its final counts.
 */
export class TokenMeter {
  provider: string | null = null;
  model: string | null = null;
  private promptChars = 0;
  private pieces = 0;
  private chars = 0;
  private input: number | undefined;
  private output: number | undefined;
  private total: Usage | undefined;

  /** The model request starts: who answers it, and how long its prompt (system text included) is. */
  started(provider: string, model: string, promptChars: number): void {
    this.provider = provider;
    this.model = model;
    this.promptChars = promptChars;
  }

  /** A piece of the answer arrived. */
  streamed(piece: string): void {
    this.pieces++;
    this.chars += piece.length;
  }

  /** The provider's counts so far, as its stream reported them. */
  reported(usage: { inputTokens?: number | undefined; outputTokens?: number | undefined }): void {
    if (usage.inputTokens !== undefined) this.input = usage.inputTokens;
    if (usage.outputTokens !== undefined) this.output = usage.outputTokens;
  }

  /** The model's work is over, with these counts (a tool loop's, summed over its turns). */
  finished(provider: string, model: string, usage: Usage): void {
    this.provider = provider;
    this.model = model;
    this.total = usage;
  }

  /** The tokens used so far, as the call record keeps them. */
  get usage(): Usage {
    if (this.total) return this.total;
    if (this.pieces === 0 && this.input === undefined && this.output === undefined)
      return { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
    const input = this.input ?? Math.ceil(this.promptChars / CHARS_PER_TOKEN);
    const output = Math.max(this.output ?? 0, this.pieces, Math.ceil(this.chars / CHARS_PER_TOKEN));
    return { input_tokens: input, output_tokens: output, total_tokens: input + output };
  }
}
