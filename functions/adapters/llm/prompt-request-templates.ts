import { randomUUID } from 'node:crypto';
import type { LlmRequest } from '../../ports/llm-gateway.ts';
import type { CapturedRequest } from './sdk-offline-fetch.ts';

/**
 * A vendor request for one shape of prompt call (provider, model, whether there are system
 * instructions, the output limit and schema), as the AI SDK's provider builds it, with the two
 * places where the system text and the prompt go left open.
 */
export interface PromptRequestTemplate {
  url: string;
  headers: Record<string, string>;
  /** The JSON body cut at each open place: `pieces[i]`, slot i's value as JSON, `pieces[i + 1]`, … */
  pieces: string[];
  slots: ('system' | 'prompt')[];
}

/** Builds the provider's request for these (placeholder) texts, without sending it. */
export type CaptureRequest = (request: LlmRequest) => Promise<CapturedRequest | undefined>;

/**
 * Shapes remembered at most, and the characters of their keys and templates together (a schema is
 * a tenant's to size): a platform's agents use a handful of models and schemas.
 */
const MAX_TEMPLATES = 1_000;
const MAX_TEMPLATE_CHARS = 8 * 1024 * 1024;

/**
 * The request templates of prompt calls, built by the SDK on a shape's first call and kept.
 *
 * Why: the provider packages rebuild the whole request on every call (their options parsed with
 * zod, the model's capabilities looked up, the schema normalized, headers combined), though for
 * a given model and shape only the two texts change. Building it once with placeholder texts and
 * writing the real texts (as JSON strings, exactly as the SDK's JSON.stringify writes them) into
 * the placeholders gives the same bytes the SDK would send (test/adapters/direct-prompt-call.test.ts
 * compares them) for a fraction of the CPU, and keeps the SDK the one that knows each vendor's
 * request: reasoning models' developer role and max_completion_tokens, Anthropic's per-model
 * output limits, each vendor's structured-output mode.
 *
 * A shape whose request cannot be cut this way (a placeholder the provider changed or repeated)
 * or that asks the model for a tool (Anthropic's and Gemini's JSON tool for structured output,
 * whose answer is a tool call) is `null`: the SDK sends it, as before.
 */
export class PromptRequestTemplates {
  private readonly templates = new Map<string, Promise<PromptRequestTemplate | null>>();
  /** The characters each shape holds (its key and its template's pieces), and their sum. */
  private readonly sizes = new Map<string, number>();
  private chars = 0;
  private readonly capture: CaptureRequest;

  constructor(capture: CaptureRequest) {
    this.capture = capture;
  }

  get(request: LlmRequest): Promise<PromptRequestTemplate | null> {
    const key = shapeKey(request);
    const cached = this.templates.get(key);
    if (cached) return cached;
    const built = this.build(request);
    this.templates.set(key, built);
    this.account(key, key.length);
    built.then(
      (template) => {
        if (this.templates.get(key) === built && template)
          this.account(key, key.length + template.pieces.reduce((n, piece) => n + piece.length, 0));
      },
      () => {
        if (this.templates.get(key) === built) this.forget(key);
      },
    );
    return built;
  }

  /** Records what a shape holds, then forgets the oldest shapes (a Map iterates in insertion order) past the bounds. */
  private account(key: string, size: number): void {
    this.chars += size - (this.sizes.get(key) ?? 0);
    this.sizes.set(key, size);
    while (this.templates.size > MAX_TEMPLATES || this.chars > MAX_TEMPLATE_CHARS) {
      const oldest = this.templates.keys().next().value;
      if (oldest === undefined || oldest === key) break;
      this.forget(oldest);
    }
  }

  private forget(key: string): void {
    this.templates.delete(key);
    this.chars -= this.sizes.get(key) ?? 0;
    this.sizes.delete(key);
  }

  private async build(request: LlmRequest): Promise<PromptRequestTemplate | null> {
    const placeholders = {
      system: `agenthost-template-system-${randomUUID()}`,
      prompt: `agenthost-template-prompt-${randomUUID()}`,
    };
    const captured = await this.capture({
      ...request,
      system: request.system == null ? undefined : placeholders.system,
      prompt: placeholders.prompt,
    });
    if (!captured) return null;
    let body: unknown;
    try {
      body = JSON.parse(captured.body);
    } catch {
      return null;
    }
    if (typeof body !== 'object' || body === null || 'tools' in body) return null;
    const wanted: ('system' | 'prompt')[] = request.system == null ? ['prompt'] : ['system', 'prompt'];
    const found: { at: number; slot: 'system' | 'prompt'; length: number }[] = [];
    for (const slot of wanted) {
      const quoted = JSON.stringify(placeholders[slot]);
      const at = captured.body.indexOf(quoted);
      if (at < 0 || captured.body.indexOf(quoted, at + 1) >= 0) return null;
      found.push({ at, slot, length: quoted.length });
    }
    if (captured.url.includes(placeholders.prompt) || captured.url.includes(placeholders.system)) return null;
    found.sort((a, b) => a.at - b.at);
    const pieces: string[] = [];
    let from = 0;
    for (const place of found) {
      pieces.push(captured.body.slice(from, place.at));
      from = place.at + place.length;
    }
    pieces.push(captured.body.slice(from));
    return { url: captured.url, headers: captured.headers, pieces, slots: found.map((f) => f.slot) };
  }
}

/** The request body for these texts: the template's pieces with the texts written in as JSON. */
export function fillTemplate(template: PromptRequestTemplate, request: LlmRequest): string {
  let body = template.pieces[0]!;
  for (let i = 0; i < template.slots.length; i++) {
    const value = template.slots[i] === 'system' ? request.system : request.prompt;
    body += JSON.stringify(value) + template.pieces[i + 1]!;
  }
  return body;
}

/** A schema's JSON, kept per schema object (an agent version's schema is one object while cached). */
const schemaKeys = new WeakMap<object, string>();

function shapeKey(request: LlmRequest): string {
  let schema = '';
  if (request.outputSchema) {
    schema = schemaKeys.get(request.outputSchema) ?? JSON.stringify(request.outputSchema);
    schemaKeys.set(request.outputSchema, schema);
  }
  return `${request.provider}\u0000${request.model}\u0000${request.system == null ? '-' : 's'}\u0000${request.maxOutputTokens ?? ''}\u0000${schema}`;
}
