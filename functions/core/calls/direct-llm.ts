import { readFile } from 'node:fs/promises';
import type { CoreDeps } from '../../ports/core-deps.ts';
import {
  LlmAbortedError,
  LlmError,
  LlmNotConfiguredError,
  type LlmProviderId,
  type LlmStreamedUsage,
} from '../../ports/llm-gateway.ts';
import { invalidInput, PlatformError } from '../../shared/errors.ts';
import { jsonTooDeep } from '../../shared/json-depth.ts';
import { resolveSkillRef } from '../agents/agent-lookup.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import type { Warning } from '../agents/manifest.ts';
import { fillPlaceholders, placeholders } from '../agents/placeholders.ts';
import { DEFAULT_MODELS } from '../agents/providers.ts';
import { userSchemaValidator } from '../agents/user-schema-validator.ts';
import { requireVisible } from '../agents/visibility.ts';
import { tracedGenerate } from '../traces/model-spans.ts';
import type { CallContext, EngineRun } from './call-context.ts';
import type { CallFile } from './call-input.ts';
import { isTextType } from './call-input.ts';
import type { CallOptions } from './call-options.ts';
import { providerFailure } from './llm-failure.ts';

export interface EngineResult {
  data: Record<string, unknown>;
  warnings: Warning[];
  provider: string;
  model: string;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
}

const ALL_PROVIDERS: LlmProviderId[] = ['anthropic', 'openai', 'google', 'ollama'];

/**
 * Which provider serves the call: the caller's X-Platform-Provider when the agent supports it,
 * else the first of its supported_providers; for `any`, the caller's choice among all four or,
 * without one, the first provider the platform has configured (anthropic, openai, google, ollama).
 */
export function chooseProvider(
  deps: CoreDeps,
  agent: AgentVersion,
  requested: string | undefined,
): LlmProviderId {
  const supported = agent.manifest.supported_providers as string[];
  const allowed: LlmProviderId[] = supported.includes('any')
    ? ALL_PROVIDERS
    : (supported.filter((p) => (ALL_PROVIDERS as string[]).includes(p)) as LlmProviderId[]);
  if (requested !== undefined) {
    if (!(allowed as string[]).includes(requested)) {
      throw invalidInput([
        {
          field: 'header.x-platform-provider',
          message: `must be one of ${allowed.join(', ')} for this agent`,
        },
      ]);
    }
    return requested as LlmProviderId;
  }
  if (!supported.includes('any')) return allowed[0] as LlmProviderId;
  const configured = ALL_PROVIDERS.find(
    (p) => deps.config.llm[p].apiKey || (p === 'ollama' && deps.config.llm[p].baseUrl),
  );
  return configured ?? 'anthropic';
}

/** Caller override, then the manifest's default_models[provider], then the platform default (configurable). */
export function chooseModel(
  deps: CoreDeps,
  agent: AgentVersion,
  provider: LlmProviderId,
  override: string | undefined,
): string {
  const fromManifest = (agent.manifest.default_models as Record<string, string | undefined>)[provider];
  return override || fromManifest || deps.config.llm[provider].defaultModel || DEFAULT_MODELS[provider];
}

/**
 * Renders `{{name}}` placeholders from the input: strings as they are, other values as JSON. A
 * placeholder with no value in the input is a 400 naming the field (the template needs it).
 */
export function renderTemplate(template: string, input: Record<string, unknown>): string {
  requireTemplateValues(template, input);
  return fillPlaceholders(template, (name) => {
    const v = input[name];
    // As String.replace writes what its replacer returns: undefined as "undefined".
    return typeof v === 'string' ? v : String(JSON.stringify(v));
  });
}

/** 400 naming each placeholder of the template that has no value in the input. */
export function requireTemplateValues(template: string, input: Record<string, unknown>): void {
  const missing = placeholders(template).filter((name) => input[name] === undefined || input[name] === null);
  if (missing.length > 0) {
    throw invalidInput(
      missing.map((name) => ({ field: `body.${name}`, message: 'is required by the prompt template' })),
    );
  }
}

/** The skills a call uses, per the agent's defaults, the caller's headers and skills_locked. */
export async function skillTexts(
  deps: CoreDeps,
  agent: AgentVersion,
  options: CallOptions,
  warnings: Warning[],
): Promise<string[]> {
  const callerAsked = options.skills.length > 0 || options.skillsOnly || options.noSkills;
  const defaults = agent.manifest.default_skills.map((ref) => ({ ref, fromCaller: false }));
  const asked = options.skills.map((ref) => ({ ref, fromCaller: true }));
  let refs: { ref: string; fromCaller: boolean }[];
  if (agent.manifest.skills_locked) {
    if (callerAsked) {
      warnings.push({
        code: 'SKILLS_LOCKED',
        field: 'header.x-platform-skills',
        message: 'this agent locks its skills (skills_locked); the skill headers were ignored',
      });
    }
    refs = defaults;
  } else if (options.noSkills) {
    refs = [];
  } else if (options.skillsOnly) {
    refs = asked;
  } else {
    const named = new Set(agent.manifest.default_skills);
    refs = [...defaults, ...asked.filter((s) => !named.has(s.ref))];
  }
  const header = options.skillsOnly ? 'header.x-platform-skills-only' : 'header.x-platform-skills';
  const texts: string[] = [];
  const seen = new Set<string>();
  for (const { ref, fromCaller } of refs) {
    if (seen.has(ref)) continue;
    seen.add(ref);
    const field = fromCaller ? header : 'default_skills';
    const skill = await resolveSkillRef(deps, ref);
    if (!skill) throw invalidInput([{ field, message: `skill ${ref} does not exist` }]);
    // A skill the caller names must be visible to the caller; a default skill to the agent's own
    // workspace (its author chose it, and may have lost access to it since).
    await requireVisible(
      deps,
      skill,
      fromCaller ? { accountId: options.callerAccountId } : { workspaceId: agent.workspace_id },
      { ref, field },
    );
    const md = skill.skill_files?.['SKILL.md'] ?? '';
    const body = md.replace(/^---\r?\n[\s\S]*?\r?\n---\r?\n?/, '').trim();
    texts.push(`## Skill: ${skill.org}/${skill.name}\n${body}`);
  }
  return texts;
}

/** The input's text files (and the others' descriptions) as the `files` template variable. */
async function filesVariable(files: CallFile[]): Promise<unknown[]> {
  return Promise.all(
    files.map(async (f) => ({
      original_name: f.original_name,
      content_type: f.content_type,
      size_bytes: f.size_bytes,
      ...(isTextType(f.content_type) ? { text: await readFile(f.path, 'utf8') } : {}),
    })),
  );
}

/**
 * The direct_llm engine: one model call with the rendered prompt, the skills as system text, and
 * structured output when the agent has an output_schema (validated with ajv; a non-conforming
 * answer is 502 LLM_ERROR, retryable).
 */
export async function runDirectLlm(deps: CoreDeps, call: CallContext, run: EngineRun): Promise<EngineResult> {
  const { agent } = call;
  const { input, files, options, signal } = run;
  const warnings: Warning[] = [];
  const provider = chooseProvider(deps, agent, options.provider);
  const model = chooseModel(deps, agent, provider, options.model);
  const variables = files.length > 0 ? { ...input, files: await filesVariable(files) } : input;
  const template = agent.manifest.prompt_template ?? '{{input}}';
  const prompt = agent.manifest.prompt_template
    ? renderTemplate(template, variables)
    : JSON.stringify(variables);
  const skills = await skillTexts(deps, agent, options, warnings);
  const outputSchema = agent.manifest.output_schema as Record<string, unknown> | undefined;
  const system = [agent.manifest.description, ...skills].join('\n\n');
  const { events, tokens } = run;
  tokens?.started(provider, model, system.length + prompt.length);
  let result: Awaited<ReturnType<CoreDeps['llm']['generate']>>;
  try {
    result = await tracedGenerate(call.trace, (r) => deps.llm.generate(r), {
      provider,
      model,
      system,
      prompt,
      ...(outputSchema ? { outputSchema } : {}),
      // A streamed call gets the text as the model writes it; a structured answer is one JSON
      // object, sent whole in the result (docs/calls.md, "Streamed calls"). Its tokens are counted
      // as they come: a call cut off mid-answer is recorded with what the provider billed.
      ...(events && !outputSchema
        ? {
            onText: (text: string) => {
              tokens?.streamed(text);
              return events.delta(text);
            },
            ...(tokens ? { onUsage: (usage: LlmStreamedUsage) => tokens.reported(usage) } : {}),
          }
        : {}),
      signal,
    });
  } catch (err) {
    if (err instanceof LlmAbortedError || signal.aborted)
      throw new PlatformError('TIMEOUT', 'The call exceeded its deadline');
    if (err instanceof LlmNotConfiguredError) throw new PlatformError('LLM_ERROR', err.message);
    if (err instanceof LlmError) {
      // The caller gets a fixed message; the provider's words go to the agent's log (call-report.ts).
      const { error, log } = providerFailure(err);
      throw Object.assign(error, { logs: [log] });
    }
    throw err;
  }
  // The provider's own counts, for a call that fails after the answer (not matching output_schema,
  // its storage failing): recorded as billed, not as the estimate of the pieces or as 0.
  tokens?.finished(provider, model, tokenUsage(result.usage));
  if (result.finishReason === 'length') {
    warnings.push({
      code: 'TRUNCATED',
      message: 'the model stopped at its output token limit; the answer may be cut off',
    });
  }
  let data: Record<string, unknown>;
  if (outputSchema) {
    const value = result.object ?? tryParse(result.text);
    const validate = await userSchemaValidator(outputSchema);
    if (value === undefined || !validate(value)) {
      const why = (validate.errors ?? [])
        .map((e) => `${e.instancePath || '/'} ${e.message}`)
        .slice(0, 3)
        .join('; ');
      throw new PlatformError(
        'LLM_ERROR',
        `The model's answer does not match the agent's output_schema${why ? ` (${why})` : ' (not JSON)'}`,
        { provider },
      );
    }
    data = value as Record<string, unknown>;
  } else {
    data = { text: result.text };
  }
  return {
    data,
    warnings,
    provider,
    model,
    usage: tokenUsage(result.usage),
  };
}

/** The provider's token counts as the call record keeps them (total = in + out when not given). */
export function tokenUsage(usage: {
  inputTokens: number | undefined;
  outputTokens: number | undefined;
  totalTokens: number | undefined;
}): EngineResult['usage'] {
  const input = usage.inputTokens ?? 0;
  const output = usage.outputTokens ?? 0;
  return { input_tokens: input, output_tokens: output, total_tokens: usage.totalTokens ?? input + output };
}

function tryParse(text: string): unknown {
  if (jsonTooDeep(text)) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
