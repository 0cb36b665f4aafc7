/**
 * The kinds of starter agent `agenthost init` writes (init-templates.ts), and what publishing each
 * needs.
 */

export const INIT_TYPES = ['prompt', 'tool', 'agent', 'skill', 'service'] as const;
export type InitType = (typeof INIT_TYPES)[number];

/** File path (relative to the agent's directory) → content. */
export type TemplateFiles = Record<string, string>;

/** A JSON file's text, as the starters write them. */
export const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Tool and agent types must list required_secrets unless published with this flag (spec). */
export const NEEDS_ALLOW_NO_SECRETS: Record<InitType, boolean> = {
  prompt: false,
  tool: true,
  agent: true,
  skill: false,
  service: true,
};
