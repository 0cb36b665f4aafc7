import { parseDocument } from 'yaml';
import type { FieldIssue } from '../../shared/errors.ts';
import { agentNameSchema, descriptionSchema } from './manifest-fields.ts';

/**
 * SKILL.md: a skill is defined by YAML frontmatter (name, description, anything else) between
 * leading `---` lines, followed by the markdown body that is the skill's prompt fragment.
 * docs/manifest.md ("SKILL.md") is the reference.
 */

export const MAX_SKILL_MD_BYTES = 256 * 1024;

/** Frontmatter keys that carry over into the skill's manifest record; the rest stay frontmatter. */
export const SKILL_MANIFEST_KEYS = ['tags', 'is_public', 'allow_local_download', 'price_credits'] as const;

export interface Skill {
  name: string;
  description: string;
  /** The markdown after the frontmatter, leading blank lines and trailing whitespace removed. */
  body: string;
  /** Every frontmatter key except name and description, as plain JSON values. */
  frontmatter: Record<string, unknown>;
}

export type ParseSkillMdResult = { ok: true; skill: Skill } | { ok: false; issues: FieldIssue[] };

const FRONTMATTER = /^---[ \t]*\r?\n([\s\S]*?)^---[ \t]*(?:\r?\n|$)/m;

function firstMessage(result: { success: boolean; error?: { issues: Array<{ message: string }> } }): string {
  return result.error?.issues[0]?.message ?? 'is invalid';
}

export function parseSkillMd(text: string): ParseSkillMdResult {
  if (Buffer.byteLength(text, 'utf8') > MAX_SKILL_MD_BYTES) {
    return { ok: false, issues: [{ field: '', message: `must be at most ${MAX_SKILL_MD_BYTES / 1024} KB` }] };
  }
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const match = source.startsWith('---') ? FRONTMATTER.exec(source) : null;
  if (match?.index !== 0) {
    return {
      ok: false,
      issues: [
        {
          field: 'frontmatter',
          message: 'is required: SKILL.md must start with YAML frontmatter between --- lines',
        },
      ],
    };
  }

  // The core schema knows only plain JSON-like values; no custom tags, no merge keys, and
  // aliases are capped, so a hostile file can neither construct objects nor expand without bound.
  const doc = parseDocument(match[1]!, {
    schema: 'core',
    customTags: [],
    merge: false,
    strict: true,
    uniqueKeys: true,
    prettyErrors: false,
  });
  const problems = [...doc.errors, ...doc.warnings];
  if (problems.length > 0) {
    return {
      ok: false,
      issues: [...new Set(problems.map((e) => e.message))]
        .slice(0, 5)
        .map((message) => ({ field: 'frontmatter', message: `is not valid YAML: ${message}` })),
    };
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 50 });
  } catch (err) {
    return {
      ok: false,
      issues: [{ field: 'frontmatter', message: `is not valid YAML: ${(err as Error).message}` }],
    };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return {
      ok: false,
      issues: [{ field: 'frontmatter', message: 'must be a YAML mapping (key: value lines)' }],
    };
  }

  const { name, description, ...rest } = data as Record<string, unknown>;
  const issues: FieldIssue[] = [];
  const nameResult = agentNameSchema.safeParse(name);
  if (name === undefined) issues.push({ field: 'frontmatter.name', message: 'is required' });
  else if (typeof name !== 'string') issues.push({ field: 'frontmatter.name', message: 'must be a string' });
  else if (!nameResult.success) issues.push({ field: 'frontmatter.name', message: firstMessage(nameResult) });
  const descriptionResult = descriptionSchema.safeParse(description);
  if (description === undefined) issues.push({ field: 'frontmatter.description', message: 'is required' });
  else if (typeof description !== 'string') {
    issues.push({ field: 'frontmatter.description', message: 'must be a string' });
  } else if (!descriptionResult.success) {
    issues.push({ field: 'frontmatter.description', message: firstMessage(descriptionResult) });
  }
  const body = source
    .slice(match[0].length)
    .replace(/^(?:[ \t]*\r?\n)+/, '')
    .trimEnd();
  if (body === '') {
    issues.push({
      field: 'body',
      message: 'must not be empty: the markdown after the frontmatter is the skill itself',
    });
  }
  if (issues.length > 0 || !nameResult.success || !descriptionResult.success) return { ok: false, issues };
  return {
    ok: true,
    skill: { name: nameResult.data, description: descriptionResult.data, body, frontmatter: rest },
  };
}

/**
 * The manifest record a skill publishes as, so skills go through parseManifest and the same
 * publish path as agents. The body is not part of it: it is published as the skill's prompt.
 * An issue that parseManifest reports on one of SKILL_MANIFEST_KEYS is about the frontmatter key
 * of that name.
 */
export function skillToManifest(skill: Skill): Record<string, unknown> {
  const carried: Record<string, unknown> = {};
  for (const key of SKILL_MANIFEST_KEYS) {
    if (key in skill.frontmatter) carried[key] = skill.frontmatter[key];
  }
  return {
    name: skill.name,
    type: 'skill',
    description: skill.description,
    supported_providers: ['any'],
    ...carried,
  };
}
