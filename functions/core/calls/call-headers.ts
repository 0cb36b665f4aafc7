/**
 * The X-Platform-* request headers of a call whose values have a shape, checked before anything
 * else happens (lookups, quotas, a run): a malformed value is 400 INVALID_INPUT naming the header,
 * never silently read as something else. X-Platform-Deadline-Ms is checked by deadline.ts, the
 * provider and model by the engines that use them (they depend on the agent).
 */
import { type FieldIssue, invalidInput } from '../../shared/errors.ts';
import { SKILL_REF_PATTERN } from '../agents/manifest-names.ts';
import { splitList } from './call-options.ts';

/** X-Platform-Max-Hops: a positive whole number of at most three digits (manifests cap max_hops lower). */
const MAX_HOPS_PATTERN = /^[1-9][0-9]{0,2}$/;
const BOOLEAN_PATTERN = /^(true|false)$/i;

export function checkCallHeaders(headers: (name: string) => string | undefined): void {
  const issues: FieldIssue[] = [];
  const hops = headers('x-platform-max-hops')?.trim();
  if (hops !== undefined && !MAX_HOPS_PATTERN.test(hops))
    issues.push({ field: 'header.x-platform-max-hops', message: 'must be a whole number from 1 to 999' });
  const noSkills = headers('x-platform-no-skills')?.trim();
  if (noSkills !== undefined && !BOOLEAN_PATTERN.test(noSkills))
    issues.push({ field: 'header.x-platform-no-skills', message: 'must be true or false' });
  const refs = (name: string, allowFlag: boolean) => {
    const value = headers(name)?.trim();
    if (value === undefined || (allowFlag && BOOLEAN_PATTERN.test(value))) return;
    const bad = splitList(value).filter((ref) => !SKILL_REF_PATTERN.test(ref));
    if (bad.length > 0)
      issues.push({
        field: `header.${name}`,
        message: `${allowFlag ? 'must be true, false or ' : 'must be '}comma-separated skill refs such as org/skill or org/skill@v1 (not ${bad
          .slice(0, 3)
          .map((r) => JSON.stringify(r))
          .join(', ')})`,
      });
  };
  refs('x-platform-skills', false);
  // X-Platform-Skills-Only carries the refs, or is `true` with the refs in X-Platform-Skills.
  refs('x-platform-skills-only', true);
  if (issues.length > 0) throw invalidInput(issues);
}
