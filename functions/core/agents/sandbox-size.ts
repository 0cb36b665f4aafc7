import type { Tier } from '../../ports/config.ts';
import { type FieldIssue, invalidInput } from '../../shared/errors.ts';
import { TIER_LIMITS } from '../accounts/tiers.ts';
import type { Manifest } from './manifest.ts';

/**
 * A manifest's `sandbox` (the vCPUs and memory its runs need) within the publishing account's tier
 * (TIER_LIMITS: Free up to 1 vCPU and 2 GiB, Pro 2 and 4 GiB, Team 4 and 8 GiB, Enterprise 4 and
 * 16 GiB; docs/manifest.md). Checked when a version is published or forked: its runs are sized so
 * whoever calls them, since a version's size is its warm runners' too.
 */
export function checkSandboxSize(manifest: Manifest, tier: Tier): void {
  const asked = manifest.sandbox;
  if (!asked) return;
  const { sandboxMaxCpu, sandboxMaxMemoryMb } = TIER_LIMITS[tier];
  const issues: FieldIssue[] = [];
  if (asked.cpu !== undefined && asked.cpu > sandboxMaxCpu) {
    issues.push({
      field: 'body.sandbox.cpu',
      message: `must be at most ${sandboxMaxCpu} on the ${tier} tier`,
    });
  }
  if (asked.memory_mb !== undefined && asked.memory_mb > sandboxMaxMemoryMb) {
    issues.push({
      field: 'body.sandbox.memory_mb',
      message: `must be at most ${sandboxMaxMemoryMb} on the ${tier} tier`,
    });
  }
  if (issues.length > 0) throw invalidInput(issues);
}
