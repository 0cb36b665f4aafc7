/*
 * The kinds of agent a manifest declares: types (and their legacy names), execution engines, run
 * modes and orchestration modes, and how type, runtime and loop derive the engine
 * (docs/manifest.md).
 */

export const AGENT_TYPES = ['prompt', 'tool', 'agent', 'skill'] as const;
export const LEGACY_TYPES = { code: 'tool', agentic: 'agent' } as const;
export const EXECUTION_ENGINES = ['direct_llm', 'code_runtime', 'managed_loop'] as const;
export const RUN_MODES = ['on_demand', 'always_on'] as const;
export const ORCHESTRATION_MODES = ['strict', 'flexible'] as const;

export type AgentType = (typeof AGENT_TYPES)[number];
/** `none` is ours: skills are attached to other agents' calls and never run on their own. */
export type ExecutionEngine = (typeof EXECUTION_ENGINES)[number] | 'none';
export type RunMode = (typeof RUN_MODES)[number];

export function canonicalType(type: unknown): AgentType | undefined {
  if (typeof type !== 'string') return undefined;
  if (type === 'code' || type === 'agentic') return LEGACY_TYPES[type];
  return (AGENT_TYPES as readonly string[]).includes(type) ? (type as AgentType) : undefined;
}

/** Spec: defaults by type; a runtime object forces code_runtime, a loop object managed_loop. */
export function deriveEngine(type: AgentType, hasRuntime: boolean, hasLoop: boolean): ExecutionEngine {
  if (type === 'skill') return 'none';
  if (hasRuntime) return 'code_runtime';
  if (hasLoop) return 'managed_loop';
  return type === 'tool' ? 'code_runtime' : type === 'agent' ? 'managed_loop' : 'direct_llm';
}

/**
 * Whether an agent answers calls (POST /{org}/{agent}/{version}/{endpoint}, MCP tool calls): skills
 * are attached to other agents' calls, and always-on agents run as services with URLs of their own.
 */
export function answersCalls(manifest: { type: AgentType; run_mode: RunMode }): boolean {
  return manifest.type !== 'skill' && manifest.run_mode !== 'always_on';
}
