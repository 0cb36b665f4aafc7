/**
 * Which file types a call to an agent may carry (anything else is 415 UNSUPPORTED_TYPE). A
 * code-runtime agent gets the files as they are, so it takes any type unless its manifest narrows
 * it with `accepted_file_types` (MIME patterns: `application/pdf`, `image/*`, `*\/*`); an agent
 * whose files go to a model takes the types a model can be given (CALL_FILE_TYPES), narrowed the
 * same way. docs/calls.md and docs/manifest.md describe both.
 */
import type { AgentVersion } from '../agents/agent-record.ts';
import { CALL_FILE_TYPES } from './call-limits.ts';

export interface FileTypePolicy {
  accepts(type: string): boolean;
  /** For the 415's message: what the agent takes. */
  described: string;
}

/** Whether a MIME pattern (`type/subtype`, `type/*` or `*\/*`) matches a type (lowercase, no parameters). */
export function mimeMatches(pattern: string, type: string): boolean {
  const p = pattern.toLowerCase();
  if (p === '*/*') return true;
  if (p.endsWith('/*')) return type.startsWith(p.slice(0, -1));
  return p === type;
}

export function fileTypePolicy(agent: Pick<AgentVersion, 'manifest'>): FileTypePolicy {
  const narrowed = agent.manifest.accepted_file_types;
  const within = (type: string) => !narrowed || narrowed.some((p) => mimeMatches(p, type));
  if (agent.manifest.execution_engine === 'code_runtime') {
    return {
      accepts: within,
      described: narrowed ? `one of the agent's accepted_file_types (${narrowed.join(', ')})` : 'any type',
    };
  }
  return {
    accepts: (type) => (CALL_FILE_TYPES as readonly string[]).includes(type) && within(type),
    described: narrowed
      ? `a supported file type (docs/calls.md) among the agent's accepted_file_types (${narrowed.join(', ')})`
      : 'one of the supported file types (docs/calls.md)',
  };
}
