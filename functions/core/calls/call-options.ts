/**
 * What a caller may choose for the model side of a call, from its X-Platform-* headers: provider,
 * model and skills. The direct_llm and managed_loop engines read them.
 */

export interface CallOptions {
  /** X-Platform-Provider: one of the agent's supported providers. */
  provider: string | undefined;
  /** X-Platform-Model: overrides the model. */
  model: string | undefined;
  /** X-Platform-Skills: refs to add; with skillsOnly, the only skills. */
  skills: string[];
  skillsOnly: boolean;
  noSkills: boolean;
  /** The calling account: the skills it names must be visible to it (core/agents/visibility.ts). */
  callerAccountId: string;
}

/** A comma-separated header's items, trimmed, empty ones dropped (call-headers.ts checks their shape). */
export function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function callOptions(
  headers: (name: string) => string | undefined,
  callerAccountId: string,
): CallOptions {
  const only = splitList(headers('x-platform-skills-only'));
  const flag = (v: string | undefined) => v?.trim().toLowerCase() === 'true';
  return {
    provider: headers('x-platform-provider')?.trim() || undefined,
    model: headers('x-platform-model')?.trim() || undefined,
    // X-Platform-Skills-Only carries the refs, or is `true` with the refs in X-Platform-Skills.
    skills:
      only.length > 0 && !flag(headers('x-platform-skills-only'))
        ? only
        : splitList(headers('x-platform-skills')),
    skillsOnly: only.length > 0,
    noSkills: flag(headers('x-platform-no-skills')),
    callerAccountId,
  };
}
