import type { Tier } from '../../ports/config.ts';

export interface TierLimits {
  /** Agent calls per UTC day (spec "Limits"). */
  dailyCalls: number;
  concurrentRequests: number;
  sandboxDailyCalls: number;
  sandboxMaxTimeoutSeconds: number;
  /**
   * The longest a run (a call started with `Prefer: respond-async`, or an MCP task) of a caller of
   * this tier may last, whatever its agent's run_timeout_seconds (docs/runs.md, "How long a run
   * lasts"). Not the request timeout, which the spec caps at 300 s.
   */
  runMaxSeconds: number;
  /** The most vCPUs and MiB an agent published by an account of this tier may declare (manifest `sandbox`). */
  sandboxMaxCpu: number;
  sandboxMaxMemoryMb: number;
  scheduling: boolean;
  services: number;
  instancesPerService: number;
  /** Workspaces an account owns at once, its personal one included (docs/limits.md, "Counts per account"). */
  ownedWorkspaces: number;
  /** Invitations an account has sent that wait for an answer, over all its workspaces. */
  pendingInvitations: number;
  /**
   * Request units an account may spend a minute on the API's routes other than agent calls: a
   * request costs 1, its answer 1 more per ANSWER_BYTES_PER_UNIT (docs/http.md, "Request rate").
   */
  requestUnitsPerMinute: number;
}

/**
 * Free and Pro are the spec's numbers. The spec gives Team only service limits and Enterprise
 * "custom"; the other Team and Enterprise values are our defaults (docs/decisions.md). The spec
 * shows no limit of workspaces, invitations or requests a minute: ours bound what one account may
 * make and take (without them one free account could make 2,000 workspaces and 2,000 invitations
 * in 10 s: docs/limits.md). Nor of a run's length: ours lets a paid tier's run last an hour, and a
 * free one's the 300 s of any call (docs/limits.md, "Runs").
 */
export const TIER_LIMITS: Record<Tier, TierLimits> = {
  free: {
    sandboxMaxCpu: 1,
    sandboxMaxMemoryMb: 2048,
    dailyCalls: 1_000,
    concurrentRequests: 10,
    sandboxDailyCalls: 50,
    sandboxMaxTimeoutSeconds: 30,
    runMaxSeconds: 300,
    scheduling: false,
    services: 0,
    instancesPerService: 0,
    ownedWorkspaces: 5,
    pendingInvitations: 20,
    requestUnitsPerMinute: 1_200,
  },
  pro: {
    sandboxMaxCpu: 2,
    sandboxMaxMemoryMb: 4096,
    dailyCalls: 10_000,
    concurrentRequests: 50,
    sandboxDailyCalls: 500,
    sandboxMaxTimeoutSeconds: 300,
    runMaxSeconds: 3_600,
    scheduling: true,
    services: 5,
    instancesPerService: 3,
    ownedWorkspaces: 25,
    pendingInvitations: 100,
    requestUnitsPerMinute: 6_000,
  },
  team: {
    sandboxMaxCpu: 4,
    sandboxMaxMemoryMb: 8192,
    dailyCalls: 50_000,
    concurrentRequests: 100,
    sandboxDailyCalls: 2_500,
    sandboxMaxTimeoutSeconds: 300,
    runMaxSeconds: 3_600,
    scheduling: true,
    services: 20,
    instancesPerService: 10,
    ownedWorkspaces: 100,
    pendingInvitations: 500,
    requestUnitsPerMinute: 12_000,
  },
  enterprise: {
    sandboxMaxCpu: 4,
    sandboxMaxMemoryMb: 16384,
    dailyCalls: 250_000,
    concurrentRequests: 500,
    sandboxDailyCalls: 10_000,
    sandboxMaxTimeoutSeconds: 300,
    runMaxSeconds: 3_600,
    scheduling: true,
    services: 100,
    instancesPerService: 20,
    ownedWorkspaces: 500,
    pendingInvitations: 1000,
    requestUnitsPerMinute: 60_000,
  },
};
